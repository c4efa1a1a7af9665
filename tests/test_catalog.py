"""The catalog: every required variant present, every config builds, published counts match."""

from __future__ import annotations

import functools
import json

import pytest

from explorer import ASSETS
from explorer.architecture import analysis, catalog
from explorer.core.errors import ExplorerError
from tests.conftest import REFERENCE

REQUIRED = [
    "bert-base", "bert-large", "roberta-base", "roberta-large", "deberta-base", "deberta-v2-xlarge",
    "deberta-v3-base", "albert-base", "albert-large", "albert-xxlarge", "distilbert", "distilroberta",
    "tinybert", "mobilebert", "fastbert", "electra-small", "electra-base", "spanbert", "structbert", "xlm",
    "xlm-roberta", "longformer", "bigbird", "sentence-bert", "colbert", "colbertv2", "gpt", "gpt2", "gpt3",
    "gpt-neo", "gpt-j", "ctrl", "t5-small", "t5-base", "t5-11b", "bart-base", "bart-large", "m2m100",
    "bigbird-pegasus", "bert2bert",
]
KEYS = catalog.keys()


def test_every_required_variant_is_in_the_catalog() -> None:
    assert not set(REQUIRED) - set(KEYS)
    assert len(KEYS) == len(set(KEYS))


@pytest.mark.parametrize("key", KEYS)
def test_entry_is_complete(key: str) -> None:
    v = catalog.get_variant(key)
    assert v.family in catalog.FAMILIES and 2017 <= v.year <= 2026
    assert v.paper.startswith("https://") and v.idea.count(".") >= 1 and v.config_source
    assert v.objectives and v.attention and v.tokenizer
    assert (ASSETS / v.config_file).is_file()
    json.dumps(v.to_dict())


def test_published_configs_are_byte_identical_to_the_reference() -> None:
    ref = REFERENCE / "configs"
    if not ref.is_dir():
        pytest.skip("../shared/reference is not beside this checkout")
    for src in ref.glob("*.json"):
        assert (ASSETS / "configs" / src.name).read_bytes() == src.read_bytes(), src.name


@functools.cache
def analysed(key: str) -> analysis.Analysis:
    return analysis.analyse_variant(key, shapes=False)


@pytest.mark.parametrize("key", KEYS)
def test_every_variant_builds_and_partitions_exactly(key: str) -> None:
    result = analysed(key)
    assert sum(result.components.values()) == result.params == result.tree.params
    assert result.components.get("other", 0) == 0, result.components


PUBLISHED = [k for k in KEYS if catalog.get_variant(k).published_params]


def rounds_to(ours: int, published: int) -> bool:
    """Does ``ours`` round to ``published`` at the precision it was published with ("14M")?"""
    digits = len(str(published).rstrip("0"))
    return int(float(f"{ours:.{digits}g}")) == published


def test_rounds_to() -> None:
    assert rounds_to(13_549_057, 14_000_000) and not rounds_to(13_449_057, 14_000_000)
    assert rounds_to(6_050_882_784, 6_053_381_344) is False


@pytest.mark.parametrize("key", PUBLISHED)
def test_parameter_count_matches_the_published_figure_within_3_percent(key: str) -> None:
    """Within 3%, or equal after rounding to the published precision (ELECTRA-small "14M" = 13.5M)."""
    v = catalog.get_variant(key)
    ours = analysed(key).base_params if v.published_params_scope == "base" else analysed(key).params
    close = abs(ours / v.published_params - 1) <= 0.03 or rounds_to(ours, v.published_params)
    assert close, (ours, v.published_params, v.published_params_source)


def test_at_least_thirty_variants_have_a_published_count() -> None:
    assert len(PUBLISHED) >= 30


def test_headline_figures_from_the_sources() -> None:
    text = {k: " ".join(catalog.get_variant(k).headline) for k in KEYS}
    assert "40%" in text["distilbert"] and "97%" in text["distilbert"]
    assert "4.3" in text["mobilebert"] and "5.5" in text["mobilebert"]
    assert "4,096" in text["longformer"] and "4,096" in text["bigbird"]
    assert "6" in text["colbertv2"] and "10" in text["colbertv2"]


def test_unknown_key_suggests_close_ones() -> None:
    with pytest.raises(ExplorerError, match="Did you mean bert-base"):
        catalog.get_variant("bert-bse")


def test_albert_base_is_an_order_of_magnitude_smaller_than_bert_base() -> None:
    assert analysis.base_params_of_variant("albert-base") * 9 < analysis.base_params_of_variant("bert-base")


def test_facts_corrected_against_their_sources():
    # Gemma 3 270M: released August 2025 (Google's announcement, model card); the March report covers 1B-27B.
    gemma = catalog.get_variant("gemma3-270m")
    assert (gemma.year, gemma.month) == (2025, 8) and "August 2025" in gemma.extra["date_source"]
    # GPT-2 moved layer norm to the block inputs and uses byte-level BPE: not "the same architecture".
    assert catalog.get_variant("gpt2").derived_from == ({"key": "gpt", "relation": "successor of"},)
    # MobileBERT's teacher is IB-BERT (Sun et al. 2020, Section 3.1), an inverted-bottleneck BERT-large.
    mobile = catalog.get_variant("mobilebert")
    assert mobile.derived_from[0]["relation"] == "distilled from an inverted-bottleneck version of"
    assert "IB-BERT" in mobile.idea
    # DeBERTaV3's GDES: E_D = sg(E_G) + E_Delta, the discriminator's gradient never reaches the shared table.
    v3 = catalog.get_variant("deberta-v3-base").idea
    assert "sg(E_G)" in v3 and "never reaches the shared table" in v3


def test_byte_for_byte_is_claimed_only_for_verified_copies():
    import re

    from explorer import ASSETS

    levels = dict(re.findall(r"^\| (configs/\S+) \|.*\| ([ABC]) \|$", (ASSETS / "ATTRIBUTION.md").read_text(),
                             flags=re.MULTILINE))
    assert levels, "assets/ATTRIBUTION.md lists the verification level of every copied config"
    for v in catalog.load_catalog().values():
        if "byte for byte" in v.config_source:
            assert levels.get(v.config_file) == "A", v.key
        if "copied" in v.config_source and v.config_file in levels:  # a copy says how far it is verified
            assert f"level {levels[v.config_file]}" in v.config_source, v.key
