"""explorer.tokenization.registry: shipped files, published vocab sizes and limits, names, catalog mapping."""

from __future__ import annotations

import hashlib
import importlib.util
import re

import pytest

from explorer import ASSETS
from explorer.core.errors import ExplorerError
from explorer.tokenization.registry import (
    TOKENIZER_DIR,
    TOKENIZERS,
    get_spec,
    load_tokenizer,
    resolve_names,
    variant_tokenizers,
)
from explorer.tokenization.split import tokenize
from tests.conftest import REFERENCE

NAMES = list(TOKENIZERS)


def _attribution_hashes() -> dict[str, str]:
    text = (TOKENIZER_DIR / "ATTRIBUTION.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([\w./-]+) \|.*\| ([0-9a-f]{64}) \| [AB] \|$", text, flags=re.M)
    return dict(rows)


def test_every_shipped_file_matches_its_recorded_sha256() -> None:
    hashes = _attribution_hashes()
    files = {str(p.relative_to(TOKENIZER_DIR)) for p in TOKENIZER_DIR.rglob("*")
             if p.is_file() and p.name != "ATTRIBUTION.md"}
    assert files == set(hashes)
    for rel, sha in hashes.items():
        assert hashlib.sha256((TOKENIZER_DIR / rel).read_bytes()).hexdigest() == sha, rel


def test_every_spec_names_files_that_are_shipped() -> None:
    for spec in TOKENIZERS.values():
        for name in spec.files:
            assert (TOKENIZER_DIR / spec.directory / name).is_file(), (spec.name, name)
    assert TOKENIZER_DIR == ASSETS / "tokenizers"


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="../shared/reference is not beside this checkout")
def test_shipped_files_are_byte_copies_of_the_reference() -> None:
    for rel in _attribution_hashes():
        ours = (TOKENIZER_DIR / rel).read_bytes()
        assert ours == (REFERENCE / "tokenizers" / rel).read_bytes(), rel


@pytest.mark.skipif(not (REFERENCE / "verify_tokenizers.py").is_file(),
                    reason="../shared/reference/verify_tokenizers.py is not beside this checkout")
def test_ids_agree_with_the_reference_verification_script() -> None:
    spec = importlib.util.spec_from_file_location("verify_tokenizers", REFERENCE / "verify_tokenizers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cases = {"bert-base-uncased": (module.case_bert_uncased, "Hello, world!"),
             "bert-base-cased": (module.case_bert_cased, "Hello world!"),
             "gpt2": (module.case_gpt2, "Hello world"),
             "t5": (module.case_t5, "translate English to German: The house is wonderful."),
             "bigbird": (module.case_bigbird, "Hello world, this is BigBird.")}
    for name, (case, text) in cases.items():
        _, ids, expected, size = case()
        assert list(tokenize(name, text).ids) == ids, name
        assert expected is None or ids == expected, name
        assert len(load_tokenizer(name)) == size, name


def test_vocab_sizes_and_limits_are_the_published_ones() -> None:
    sizes = {n: len(load_tokenizer(n)) for n in NAMES}
    assert sizes == {"bert-base-uncased": 30522, "bert-base-cased": 28996, "gpt2": 50257,
                     "t5": 32100, "bigbird": 50358}
    limits = {n: load_tokenizer(n).model_max_length for n in NAMES}
    assert limits == {n: get_spec(n).model_max_length for n in NAMES} == {
        "bert-base-uncased": 512, "bert-base-cased": 512, "gpt2": 1024, "t5": 512, "bigbird": 4096}


def test_load_tokenizer_is_cached_and_lowercases_only_the_uncased_vocabulary() -> None:
    assert load_tokenizer("gpt2") is load_tokenizer("gpt2")
    assert load_tokenizer("bert-base-uncased").tokenize("Apple") == ["apple"]
    assert load_tokenizer("bert-base-cased").tokenize("Apple") == ["Apple"]


def test_unknown_names_list_the_valid_ones() -> None:
    with pytest.raises(ExplorerError, match="bert-base-uncased, bert-base-cased, gpt2, t5, bigbird"):
        load_tokenizer("roberta")
    with pytest.raises(ExplorerError, match="Unknown tokenizer 'xlnet'"):
        resolve_names(["gpt2", "xlnet"])
    with pytest.raises(ExplorerError, match="at least one"):
        resolve_names([])


def test_resolve_names_keeps_order_and_drops_duplicates() -> None:
    assert resolve_names(None) == NAMES
    assert resolve_names(["gpt2", " t5 ", "gpt2"]) == ["gpt2", "t5"]


def test_every_catalog_variant_is_shown_with_a_shipped_tokenizer() -> None:
    rows = {r.key: r for r in variant_tokenizers()}
    assert all(r.tokenizer in TOKENIZERS for r in rows.values())
    # Variants whose own vocabulary is not shipped say which tokenizer stands in.
    for key in ("albert-base", "deberta-v3-base", "xlm-roberta"):
        assert not rows[key].own and rows[key].note, key
    assert rows["bert-base"].own and rows["bert-base"].tokenizer == "bert-base-uncased"
    assert rows["bert-base"].to_dict()["note"] == ""
