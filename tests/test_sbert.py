"""Sentence-BERT's pooling strategies and training objectives on the bundled all-MiniLM-L6-v2 (explorer.tasks.sbert):
pooling by hand equals the library's, mean pooling equals the bi-encoder's embeddings, each loss is its formula."""

from __future__ import annotations

import math

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.runtime.resolve import resolve
from explorer.tasks import sbert, similarity


@pytest.fixture(scope="module")
def minilm(bundled_encoder):
    from explorer.runtime.loading import load_model

    return load_model(resolve("sentence-bert"), device="cpu")


def test_mean_pooling_is_the_bi_encoders_embedding_and_max_and_cls_differ(minilm) -> None:
    texts = ["A man is eating food.", "A cat sleeps on the windowsill in the sun."]
    hidden, mask = sbert.token_states(minilm, texts)
    assert torch.allclose(sbert.pool(hidden, mask, "mean"), similarity.encode(minilm, texts), atol=1e-5)
    cls, mx = sbert.pool(hidden, mask, "cls"), sbert.pool(hidden, mask, "max")
    assert torch.allclose(cls.norm(dim=-1), torch.ones(2)) and not torch.allclose(cls, mx)
    raw_max, raw_mean = sbert.pool(hidden, mask, "max", False), sbert.pool(hidden, mask, "mean", False)
    assert bool((raw_max >= raw_mean - 1e-6).all())  # the largest value is at least the average
    short = int(mask[0].sum())  # padding never wins the max: the short sentence alone gives the same vector
    alone = sbert.pool(hidden[:1, :short], mask[:1, :short], "max", False)
    assert torch.allclose(alone, raw_max[:1])
    with pytest.raises(ExplorerError, match="Unknown pooling"):
        sbert.pool(hidden, mask, "median")


def test_the_pooling_study_scores_every_pooling_against_the_hand_grades(minilm) -> None:
    rows = {r.pooling: r for r in sbert.pooling_study(minilm)}
    assert set(rows) == set(sbert.POOLINGS) and all(len(r.cosines) == 40 for r in rows.values())
    assert rows["mean"].spearman > 60 and rows["max"].spearman < rows["mean"].spearman  # measured 75.9 and 66.5


def test_each_objective_is_its_formula(minilm) -> None:
    a, p, n = "A man is playing a guitar.", "Someone plays an instrument.", "The stock market fell."
    got = sbert.objectives(minilm, a, p, n, "neutral", 5.0)
    hidden, mask = sbert.token_states(minilm, [a, p, n])
    u, v, w = sbert.pool(hidden, mask, "mean", False)
    assert got.cosine == pytest.approx(float(torch.nn.functional.cosine_similarity(u, v, dim=0)), abs=1e-4)
    assert got.regression_loss == pytest.approx((got.cosine - 1.0) ** 2, abs=1e-3)
    assert got.distance_positive == pytest.approx(float((u - v).norm()), abs=1e-3)
    assert got.triplet_loss == pytest.approx(max(got.distance_positive - got.distance_negative + sbert.MARGIN, 0),
                                             abs=1e-3)
    assert sum(got.probabilities) == pytest.approx(1, abs=1e-3)
    assert got.classification_loss == pytest.approx(-math.log(got.probabilities[sbert.LABELS.index("neutral")]),
                                                    abs=1e-3)


@pytest.mark.parametrize("args, said", [
    (("", "b", "c"), "anchor is empty"), (("a", "b", "x" * 3000), "negative"),
    (("a", "b", "c", "maybe"), "Unknown label"), (("a", "b", "c", "entailment", 7), "from 0 to 5"),
])
def test_bad_input_is_refused_before_any_work(args, said: str) -> None:
    with pytest.raises(ExplorerError, match=said):
        sbert.objectives(None, *args)  # no model needed: the checks come first
