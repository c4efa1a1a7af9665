"""explorer.explain.attribution (and gradients, integrated, occlusion, cost) on a tiny Gemma: contrastive scores
are differences of single runs, captum's integrated gradients equal a short reference of the formula, the cost is
checked before work, occlusion keeps what it reached when the budget ends."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.explain import attribution, framer, gradients, occlusion, served
from explorer.explain.scorer import Embedder, batch_of, score
from explorer.runtime import cancel
from explorer.runtime.cancel import CancelToken, RequestBudget
from explorer.serving.endpoints import Endpoint
from tests.tiny_gemma import load_tiny_gemma

TEXT = "The capital of France is"


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    return load_tiny_gemma(tmp_path_factory.mktemp("explain-attr") / "gemma", device="cpu")


def _scores(result: attribution.Attribution) -> np.ndarray:
    return np.array([t.score for t in result.tokens], dtype=float)


@pytest.mark.parametrize("method", ["grad-input", "ig", "smoothgrad", "occlusion"])
def test_contrastive_scores_are_the_difference_of_two_single_target_runs(gemma, method) -> None:
    both = attribution.attribute(gemma, "next-token", TEXT, "Paris", method, foil="Rome", steps=16)
    one = attribution.attribute(gemma, "next-token", TEXT, "Paris", method, steps=16)
    other = attribution.attribute(gemma, "next-token", TEXT, "Rome", method, steps=16)
    assert np.allclose(_scores(both), _scores(one) - _scores(other), atol=1e-5)
    assert both.output == pytest.approx(one.output - other.output, abs=1e-5)


def test_the_contrastive_gradient_norm_is_the_norm_of_the_gradients_difference(gemma) -> None:
    both = attribution.attribute(gemma, "next-token", TEXT, "Paris", "grad", foil="Rome")
    grads = [gradients.per_token(f, gradients.embedding_gradient(gemma.model, f)[0])
             for f in (framer.build(gemma, "next-token", TEXT, w) for w in ("Paris", "Rome"))]
    assert np.allclose(_scores(both), (grads[0] - grads[1]).norm(dim=-1).numpy(), atol=1e-5)


def _reference_ig(gemma, steps: int) -> np.ndarray:
    """IG_i = (e_i - e'_i) . sum_k w_k grad f(e' + a_k (e - e'))_i, Gauss-Legendre nodes on [0, 1]."""
    frame = framer.build(gemma, "next-token", TEXT, "Paris")
    embed, batch = Embedder(gemma.model), batch_of([frame], "cpu")
    base = batch_of([frame.__class__(**{**frame.__dict__, "rows": frame.baseline_rows()})], "cpu")
    e, e0 = embed(batch.ids).detach(), embed(base.ids).detach()  # (1, T, d)
    nodes, weights = np.polynomial.legendre.leggauss(steps)
    total = torch.zeros_like(e)
    for x, w in zip(nodes, weights, strict=True):
        point = (e0 + (x + 1) / 2 * (e - e0)).requires_grad_(True)
        (g,) = torch.autograd.grad(score(gemma.model, batch, point).sum(), point)
        total += w / 2 * g
    per_place = ((e - e0) * total).sum(-1)[0]  # (T,)
    return np.array([float(sum(per_place[i] for _, i in s.places)) for s in frame.shown])


def test_captums_integrated_gradients_equal_a_reference_implementation(gemma) -> None:
    ours = attribution.attribute(gemma, "next-token", TEXT, "Paris", "ig", steps=24)
    assert np.allclose(_scores(ours), _reference_ig(gemma, 24), atol=1e-4)
    gap = ours.output - (ours.baseline_output or 0.0)  # completeness is said as the relative gap to f(x) - f(x')
    assert ours.completeness == pytest.approx(abs(_scores(ours).sum() - gap) / abs(gap), rel=1e-4)


def test_steps_run_in_batches_give_the_same_scores(gemma) -> None:
    from explorer.explain import integrated

    frame = framer.build(gemma, "next-token", TEXT, "Paris")
    whole, single = integrated.integrated(gemma.model, frame, 8, 8), integrated.integrated(gemma.model, frame, 8, 1)
    assert np.allclose(whole.scores, single.scores, atol=1e-5)


def test_a_method_that_cannot_stop_halfway_is_refused_before_work_when_over_budget(gemma) -> None:
    token = CancelToken(RequestBudget(1e-6, 2**40, "test"), memory=lambda: 0)
    with cancel.scope(token), pytest.raises(ExplorerError, match="would take about .*python -m explorer attribute"):
        attribution.attribute(gemma, "next-token", TEXT, "Paris", "ig", steps=512)


def test_occlusion_keeps_the_tokens_it_reached_when_the_budget_ends(gemma) -> None:
    frame = framer.build(gemma, "next-token", TEXT, "Paris")
    ticks = itertools.count()
    token = CancelToken(RequestBudget(2.5, 2**40, "test"), clock=lambda: float(next(ticks)), memory=lambda: 0)
    with cancel.scope(token):
        done = occlusion.occlusion(gemma.model, frame, per_batch=1)
    assert done.scores[0] is not None and done.scores[-1] is None
    assert done.notices and done.notices[0].kind == "stopped" and "of 5 tokens" in done.notices[0].text


def test_the_cost_is_steps_times_tokens_times_the_model(gemma) -> None:
    one = attribution.attribute(gemma, "next-token", TEXT, "Paris", "ig", steps=4).cost
    two = attribution.attribute(gemma, "next-token", TEXT, "Paris", "ig", steps=8).cost
    assert one is not None and two is not None and two.passes == 2 * one.passes - 4
    assert "passes x" in one.said and one.rows >= 1


@pytest.mark.parametrize(("kwargs", "said"), [({"method": "saliency"}, "Unknown attribution method"),
                                               ({"method": "ig", "steps": 0}, "from 1 to 512")])
def test_bad_choices_are_refused(gemma, kwargs, said) -> None:
    with pytest.raises(ExplorerError, match=said):
        attribution.attribute(gemma, "next-token", TEXT, "Paris", **kwargs)


def test_a_served_model_says_its_insides_are_not_available_before_any_request() -> None:
    nowhere = Endpoint("nowhere", "http://127.0.0.1:9/v1")
    with pytest.raises(ExplorerError, match="insides .* are not available"):
        served.attribute(nowhere, TEXT, "Paris", "ig")


def test_occlusion_in_parts_equals_one_run_and_a_part_scores_only_its_span(gemma) -> None:
    from explorer.explain import parts

    whole = attribution.attribute(gemma, "next-token", TEXT, "Paris", "occlusion", foil="Rome")
    part = attribution.attribute(gemma, "next-token", TEXT, "Paris", "occlusion", foil="Rome", span=(1, 3))
    assert [t.score is not None for t in part.tokens] == [False, True, True, False, False]
    assert [t.score for t in part.tokens][1:3] == pytest.approx([t.score for t in whole.tokens][1:3], abs=1e-6)
    merged = parts.in_parts(lambda a, b: attribution.attribute(gemma, "next-token", TEXT, "Paris", "occlusion",
                                                               foil="Rome", span=(a, b)), 2, budget=1e9)
    assert _scores(merged) == pytest.approx(_scores(whole), abs=1e-6) and not merged.stopped


def test_a_batch_that_would_not_fit_the_time_left_is_not_started(gemma) -> None:
    """The next batch is judged by the last one's time: a budget of 10 s on a clock where each batch takes 6 s
    stops after the first batch, before the second would overrun (a 6 s budget once ran 42 s)."""
    frame = framer.build(gemma, "next-token", TEXT, "Paris")
    now = [0.0]
    real = occlusion.values

    def slow_values(model, frames, embedder):
        now[0] += 6.0 if len(frames) > 1 else 0.0  # every batch of two "takes" 6 s on the request's clock
        return real(model, frames, embedder)

    token = CancelToken(RequestBudget(10.0, 2**40, "test"), clock=lambda: now[0], memory=lambda: 0)
    with cancel.scope(token), pytest.MonkeyPatch.context() as mp:
        mp.setattr(occlusion, "values", slow_values)
        done = occlusion.occlusion(gemma.model, frame, per_batch=2)
    assert [s is not None for s in done.scores] == [True, True, False, False, False]
    assert now[0] == 6.0 and "would take about 6.0 s and 4.0 s are left" in done.notices[0].text
