"""Gradient norm: how sensitive the explained number is to each token (unsigned; one forward, one backward)."""

from __future__ import annotations

from explorer.explain.methods import Method, Scores, Work


def _compute(work: Work) -> Scores:
    from explorer.explain import gradients  # torch: only when a method runs

    grad, _, value = gradients.embedding_gradient(work.loaded.model, work.frame)
    return list[float | None](gradients.grad_norm(work.frame, grad)), value, None, None, (), None


METHOD = Method("grad", "gradient norm", 0, signed=False, backward=True, anytime=False, stepped=False, served=False,
                typical_flops=15e9, passes=lambda shown, steps: 3.0, copies=lambda shown, steps: 1,
                compute=_compute)
