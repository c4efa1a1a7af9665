"""Gradient x input: each token's first-order share of the explained number (signed, linear in it)."""

from __future__ import annotations

from explorer.explain.methods import Method, Scores, Work


def _compute(work: Work) -> Scores:
    from explorer.explain import gradients  # torch: only when a method runs

    grad, emb, value = gradients.embedding_gradient(work.loaded.model, work.frame)
    return list[float | None](gradients.grad_input(work.frame, grad, emb)), value, None, None, (), None


METHOD = Method("grad-input", "gradient x input", 1, signed=True, backward=True, anytime=False, stepped=False,
                served=False, typical_flops=15e9, passes=lambda shown, steps: 3.0, copies=lambda shown, steps: 1,
                compute=_compute)
