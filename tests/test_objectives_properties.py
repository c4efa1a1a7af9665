"""Property tests (hypothesis): every strategy on arbitrary text and arbitrary token lists."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from explorer.core.errors import ExplorerError
from explorer.objectives import STRATEGIES, run
from explorer.objectives.base import MaskedLMResult, SentencePairResult, Seq2SeqResult, Vocab, is_special
from explorer.objectives.spans import t5_reconstruct
from explorer.objectives.text import MAX_TOKENS, prepare

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PIECES = ["the", "cat", "##s", "sat", ".", "!", "▁on", "mat", "Ġdog", "[CLS]", "[SEP]", "</s>", "<s>", "?", "x"]
VOCAB = Vocab(("alpha", "beta", "gamma"), corpus=(("other", "doc", "."),))


def check(name: str, tokens: tuple[str, ...], r) -> None:
    """Invariants every result must satisfy, whatever the input."""
    json.dumps(r.to_dict())
    assert r.original_tokens == tuple(tokens)
    if isinstance(r, MaskedLMResult):
        assert len(r.input_tokens) == len(tokens) == len(r.targets) == len(r.kinds)
        for t, i, g in zip(tokens, r.input_tokens, r.targets, strict=True):
            assert g in (None, t) or name in ("gpt-clm", "xlm-clm")
            if is_special(t):  # masks never touch special tokens
                assert i == t and (g is None or name in ("gpt-clm", "xlm-clm"))
    elif isinstance(r, Seq2SeqResult):
        specials = [t for t in r.input_tokens if t in tokens and is_special(t)]
        assert specials == [t for t in tokens if is_special(t)] or name in (
            "bart-permute", "bart-rotate", "bart-compose")
        if name == "t5":
            assert t5_reconstruct(r.input_tokens, r.target_tokens) == list(tokens)
        else:
            assert r.target_tokens == tuple(tokens)
    else:
        assert isinstance(r, SentencePairResult) and r.label in r.classes


@SETTINGS
@given(text=st.text(max_size=300), seed=st.integers(0, 2**32 - 1))
@example(text="", seed=0)
@example(text="   \n\t ", seed=0)
@example(text="a", seed=1)
@example(text="😀🎉 שלום עולם مرحبا <script>alert(1)</script> [SEP] <mask> <extra_id_0>", seed=2)
@example(text="Long text. " * 400, seed=3)
def test_every_strategy_on_arbitrary_text(text: str, seed: int) -> None:
    for name, s in STRATEGIES.items():
        pair = "Une traduction." if s.pair else None
        if not text.strip():
            with pytest.raises(ExplorerError):
                prepare(text, s.tokenizer, s.frame, pair)
            continue
        p = prepare(text, s.tokenizer, s.frame, pair)
        assert len(p.tokens) <= MAX_TOKENS
        assert p.truncated == (p.n_text_tokens > len([t for t in p.tokens if not is_special(t)]))
        # the user's text never produces a special token: only the frame does
        assert sum(map(is_special, p.tokens)) == len([t for t in p.tokens if t in (p.vocab.cls, p.vocab.sep)])
        a, b = run(name, p.tokens, seed, p.vocab), run(name, p.tokens, seed, p.vocab)
        assert a == b
        check(name, p.tokens, a)


def test_long_text_is_truncated_to_the_limit() -> None:
    s = STRATEGIES["bert"]
    p = prepare("word " * 5000, s.tokenizer, s.frame)
    assert p.truncated and len(p.tokens) == MAX_TOKENS and p.n_text_tokens == 5000


@SETTINGS
@given(tokens=st.lists(st.sampled_from(PIECES), max_size=40), seed=st.integers(0, 2**32 - 1))
@example(tokens=[], seed=0)
@example(tokens=["x"], seed=0)
@example(tokens=["[CLS]", "[SEP]"], seed=0)
def test_every_strategy_on_arbitrary_token_lists(tokens: list[str], seed: int) -> None:
    for name in STRATEGIES:
        r = run(name, tokens, seed, VOCAB)
        check(name, tuple(tokens), r)
