"""Causal LM targets and decoding (greedy, temperature, top-k); distillation loss."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.core.errors import ExplorerError
from explorer.objectives.decoding import (
    EXAMPLE_TABLE,
    adjust,
    bigram_table,
    causal_lm,
    decode,
    generate,
    table_from_rows,
)
from explorer.objectives.distill import (
    EXAMPLE_STUDENT,
    EXAMPLE_TEACHER,
    EXAMPLE_TOKENS,
    EXAMPLE_TRUE,
    distill_loss,
    softmax,
)
from explorer.objectives.mlm import epoch_rng

P = np.array([0.5, 0.3, 0.15, 0.05])


def test_causal_lm_shifts_by_one() -> None:
    r = causal_lm(["a", "b", "c"], epoch_rng(0, 0), None)
    assert r.targets == ("b", "c", None) and r.input_tokens == ("a", "b", "c")


def test_greedy_temperature_top_k() -> None:
    assert adjust(P, "greedy").tolist() == [1, 0, 0, 0]
    assert adjust(P, "sample", 1.0) == pytest.approx(P)
    cold, hot = adjust(P, "sample", 0.5), adjust(P, "sample", 5.0)
    assert cold == pytest.approx(P**2 / (P**2).sum())  # p ** (1/T)
    assert cold[0] > P[0] > hot[0] and hot[-1] > P[-1]
    top2 = adjust(P, "top-k", 1.0, 2)
    assert top2 == pytest.approx([0.625, 0.375, 0, 0])
    assert adjust(P, "sample", 1e-3)[0] == pytest.approx(1.0)  # T -> 0 is greedy, no overflow
    for bad in ([], [-1, 2], [0, 0], [np.nan, 1]):
        with pytest.raises(ExplorerError):
            adjust(np.array(bad, dtype=float), "sample")
    with pytest.raises(ExplorerError):
        adjust(P, "sample", 0.0)


def test_table_from_rows() -> None:
    assert table_from_rows(["a", " b ", None, ""], [0.5, "0.5", 0.1, 0.2]) == {"a": 0.5, "b": 0.5}
    assert table_from_rows(["a", "b"], [1.0, float("nan")]) == {"a": 1.0}
    for tokens, probs in ([[], []], [["a", "a"], [0.1, 0.2]], [["a"], ["x"]], [[None], [0.3]]):
        with pytest.raises(ExplorerError):
            table_from_rows(tokens, probs)


def test_decode_draws_follow_the_adjusted_distribution() -> None:
    r = decode(EXAMPLE_TABLE, "top-k", epoch_rng(0, 0), temperature=1.0, top_k=3, n=20_000)
    assert sum(r.counts) == 20_000 and all(c == 0 for c in r.counts[3:])
    for c, q in zip(r.counts, r.adjusted, strict=True):
        assert abs(c / 20_000 - q) < 4.5 * math.sqrt(q * (1 - q) / 20_000) + 1e-12
    assert decode(EXAMPLE_TABLE, "greedy", epoch_rng(0, 0)).choice == "mat"


def test_bigram_generation_only_follows_seen_transitions() -> None:
    toks = ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]
    table = bigram_table(toks)
    assert table["the"] == {"cat": 0.5, "mat": 0.5} and "[SEP]" not in table
    out = generate(table, "the", 10, "sample", epoch_rng(0, 1))
    assert all(b in table[a] for a, b in zip(out, out[1:], strict=False))
    assert out[-1] == "." or len(out) == 11  # "." has no successor: a dead end stops early


def test_distillation_loss_parts() -> None:
    r = distill_loss(EXAMPLE_TOKENS, EXAMPLE_TEACHER, EXAMPLE_STUDENT, EXAMPLE_TRUE, temperature=2.0, alpha=0.3)
    t, s = softmax(np.array(EXAMPLE_TEACHER), 2.0), softmax(np.array(EXAMPLE_STUDENT), 2.0)
    assert r.kl == pytest.approx(float(np.sum(t * np.log(t / s))))
    assert r.kl_scaled == pytest.approx(4 * r.kl)
    assert r.ce == pytest.approx(-math.log(softmax(np.array(EXAMPLE_STUDENT))[0]))
    assert r.loss == pytest.approx(0.3 * r.ce + 0.7 * r.kl_scaled)
    # a higher temperature flattens the teacher (more "dark knowledge" visible)
    hotter = distill_loss(EXAMPLE_TOKENS, EXAMPLE_TEACHER, EXAMPLE_STUDENT, EXAMPLE_TRUE, 5.0)
    assert max(hotter.teacher_soft) < max(r.teacher_soft)
    same = distill_loss(EXAMPLE_TOKENS, EXAMPLE_TEACHER, EXAMPLE_TEACHER, EXAMPLE_TRUE, 3.0, 0.0)
    assert same.loss == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ExplorerError):
        distill_loss(EXAMPLE_TOKENS, EXAMPLE_TEACHER, EXAMPLE_STUDENT, "nope")
