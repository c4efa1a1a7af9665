"""explorer.tokenization.split: published ids, word boundaries, unknowns, truncation point, any text."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.core.errors import ExplorerError
from explorer.core.limits import TOKENIZATION_TEXT_CHARS
from explorer.tokenization.registry import TOKENIZERS, load_tokenizer
from explorer.tokenization.split import check_text, compare, tokenize
from explorer.tokenization.table import PRESETS

NAMES = list(TOKENIZERS)

# Ids the published checkpoints give (recorded in the reference verify_tokenizers.py).
PUBLISHED = {
    "bert-base-uncased": ("Hello, world!", [101, 7592, 1010, 2088, 999, 102]),
    "bert-base-cased": ("Hello world!", [101, 8667, 1362, 106, 102]),
    "gpt2": ("Hello world", [15496, 995]),
    "t5": ("translate English to German: The house is wonderful.",
           [13959, 1566, 12, 2968, 10, 37, 629, 19, 1627, 5, 1]),
}


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_published_ids(name: str) -> None:
    text, ids = PUBLISHED[name]
    assert list(tokenize(name, text).ids) == ids


def test_bigbird_wraps_text_in_its_published_cls_and_sep_ids() -> None:
    t = tokenize("bigbird", "Hello world, this is BigBird.")
    assert (t.ids[0], t.ids[-1]) == (65, 66)
    assert (t.tokens[0], t.tokens[-1]) == ("[CLS]", "[SEP]")


def test_cased_and_uncased_vocabularies_differ() -> None:
    unc = tokenize("bert-base-uncased", "Apple apple")
    cas = tokenize("bert-base-cased", "Apple apple")
    assert unc.ids[1] == unc.ids[2] and unc.tokens[1] == "apple"
    assert cas.ids[1] != cas.ids[2] and cas.tokens[1:3] == ("Apple", "apple")
    assert tokenize("bert-base-uncased", "café").tokens[1] == "cafe"  # accents stripped
    assert "é" in "".join(tokenize("bert-base-cased", "café").tokens)


def test_rare_words_split_into_more_pieces_and_continuations_are_marked() -> None:
    t = tokenize("bert-base-uncased", "good gooooood")
    pieces = t.word_pieces()
    assert pieces == [["good"], ["goo", "##oo", "##ood"]]
    assert t.word_start == (False, True, True, False, False, False)
    assert t.fertility == pytest.approx((len(pieces[0]) + len(pieces[1])) / 2)


def test_words_are_whitespace_words_for_every_tokenizer() -> None:
    for t in compare("GPT-2 and BERT split  Transformerify\ndifferently."):
        assert t.words == ("GPT-2", "and", "BERT", "split", "Transformerify", "differently.")
        assert sum(t.word_start) == len(t.words), t.name


def test_a_byte_level_piece_belongs_to_the_word_after_its_space() -> None:
    t = tokenize("gpt2", "Hello world")
    assert t.tokens == ("Hello", "Ġworld") and t.word_index == (0, 1) and t.offsets[1] == (5, 11)


def test_unknown_tokens_are_reported() -> None:
    assert tokenize("bert-base-uncased", "I 😀 it").unknown == (2,)
    assert tokenize("gpt2", "I 😀 it").unknown == ()  # byte-level: nothing is unknown
    t5 = tokenize("t5", "I 😀 it")
    assert [t5.tokens[i] for i in t5.unknown] == ["<unk>"]


def test_truncation_point_matches_what_the_model_keeps() -> None:
    text = " ".join(f"word{i}" for i in range(600))
    for name in ("bert-base-uncased", "t5", "gpt2"):
        t = tokenize(name, text)
        tok = load_tokenizer(name)
        kept = tok(text, truncation=True)["input_ids"]
        tok(text, truncation=False)  # restore the shared tokenizer's backend state
        assert len(kept) == t.max_length < t.count, name
        assert t.truncated_at is not None
        n_kept_content = len(kept) - t.n_special
        content = [o for o, sp in zip(t.offsets, t.special, strict=True) if not sp]
        assert content[n_kept_content - 1][1] <= t.truncated_at == content[n_kept_content][0]
    assert tokenize("bigbird", text).truncated_at is None  # 4096 positions: it all fits


def test_long_text_tokenizes_without_error() -> None:
    text = ("Transformers read text as tokens. " * 1500)[:50_000]
    results = compare(text, ["bert-base-uncased", "gpt2"])
    assert all(r.count > r.max_length and r.truncated_at for r in results)


def test_bad_input_raises_explorer_error_with_advice() -> None:
    for bad in ("", "   \n\t"):
        with pytest.raises(ExplorerError, match="empty"):
            compare(bad)
    with pytest.raises(ExplorerError, match="at most"):
        check_text("a" * (TOKENIZATION_TEXT_CHARS + 1))
    with pytest.raises(ExplorerError, match="string"):
        tokenize("gpt2", None)  # type: ignore[arg-type]
    with pytest.raises(ExplorerError, match="string"):
        check_text(b"bytes")
    assert check_text("ok") == "ok"


def test_empty_text_gives_only_the_special_tokens() -> None:
    t = tokenize("bert-base-uncased", "")
    assert t.tokens == ("[CLS]", "[SEP]") and t.words == () and t.fertility == 0.0


def test_html_and_rtl_text_is_tokenized_as_text() -> None:
    for name in NAMES:
        t = tokenize(name, "<script>alert(1)</script> שלום")
        assert len(t.words) == 2 and t.count > 2
    assert all(r.count > 0 for r in compare(" ".join(PRESETS.values())))


def test_to_dict_is_json_and_complete() -> None:
    d = json.loads(json.dumps(tokenize("t5", "Hello world").to_dict()))
    assert {"name", "tokens", "ids", "count", "offsets", "special", "word_start", "fertility"} <= set(d)
    assert d["count"] == len(d["tokens"]) == len(d["ids"]) == 3


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=200), name=st.sampled_from(NAMES))
def test_any_text_gives_consistent_tokens(text: str, name: str) -> None:
    t = tokenize(name, text)
    vocab = len(load_tokenizer(name))
    assert all(0 <= i < vocab for i in t.ids)
    per_token = (t.tokens, t.pieces, t.offsets, t.special, t.word_index, t.word_start)
    assert all(len(x) == t.count for x in per_token)
    in_words = sum(w is not None for w in t.word_index)
    assert t.count == t.n_special + in_words + sum(
        w is None and not sp for w, sp in zip(t.word_index, t.special, strict=True))
    assert len(t.words) == len(text.split())
    assert all(0 <= s <= e <= len(text) for s, e in t.offsets)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=200))
def test_byte_level_bpe_round_trips_any_text_exactly(text: str) -> None:
    tok = load_tokenizer("gpt2")
    assert tok.decode(list(tokenize("gpt2", text).ids)) == text


@pytest.mark.parametrize("name", ["bert-base-cased", "t5", "bigbird"])
def test_decode_round_trips_plain_sentences(name: str) -> None:
    text = "The quick brown fox jumps over the lazy dog"
    t = tokenize(name, text)
    assert load_tokenizer(name).decode(list(t.ids), skip_special_tokens=True) == text
