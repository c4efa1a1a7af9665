"""SiFT's perturbation on the bundled real models (explorer.papers.mechanisms.sift): every token moved by the same
share of its own scale, the uniform one of the same total size, the adversarial direction doing more than chance."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.papers.mechanisms import sift
from explorer.runtime.resolve import resolve


@pytest.fixture(scope="module")
def minilm(bundled_encoder):
    from explorer.runtime.loading import load_model

    return load_model(resolve("sentence-bert"), device="cpu")


def test_sift_moves_each_token_by_the_same_share_and_uniform_moves_small_ones_more(minilm) -> None:
    r = sift.perturb(minilm, "The capital of France is Paris.", 0.2)
    assert all(x == pytest.approx(0.2, abs=2e-3) for x in r.relative_sift)
    small, large = r.scale.index(min(r.scale)), r.scale.index(max(r.scale))
    assert r.relative_uniform[small] > 0.2 > r.relative_uniform[large]  # the uniform one shoves small vectors
    assert r.measure.startswith("1 - cosine") and r.kl_uniform > 0 and 0 < r.kl_sift < 1
    assert r.top_clean == ()  # an encoder has no next token


def test_the_adversarial_direction_moves_the_output_more_than_a_random_one(minilm, monkeypatch) -> None:
    adversarial = sift.perturb(minilm, "A man is eating food.", 0.1).kl_sift
    monkeypatch.setattr(sift.torch.autograd, "grad", lambda out, inp: (sift.torch.randn(inp.shape),))
    random = sift.perturb(minilm, "A man is eating food.", 0.1).kl_sift
    assert adversarial > 2 * random


@pytest.mark.parametrize("text, eps, said", [("", 0.1, "empty"), ("Hi.", 0, "above 0"), ("Hi.", 3.0, "at most"),
                                             ("Hi.", True, "above 0")])
def test_bad_input_is_refused_before_any_work(text, eps, said: str) -> None:
    with pytest.raises(ExplorerError, match=said):
        sift.perturb(None, text, eps)
