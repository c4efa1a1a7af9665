"""The masked-LM heads of the encoder families: a dense transform, its activation and a LayerNorm, then the
vocabulary, each step compared with the head's module where it has one.

The vocabulary is a Linear (``vocabulary``), or a matrix the head builds from weights whose modules it never calls
(DeBERTa's tokens' embeddings, transposed, plus a bias; MobileBERT's decoder beside its extra rows): a ``weights``
function then gives ``(W (d, V), b (V,))``, and the logits wait for the model's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from explorer.internals.forward import ops
from explorer.internals.forward.family import Ctx, read_row
from explorer.internals.forward.hooks import Point
from explorer.internals.located import has, module

__all__ = ["MlmHead", "head_logits", "points_of"]

Weights = Callable[[nn.Module], tuple[torch.Tensor, torch.Tensor | None]]


@dataclass(frozen=True)
class MlmHead:
    """Paths from the model's root (the head class); ``dense`` and ``norm`` None: the vocabulary alone (XLM)."""

    activation: str
    vocabulary: str | None = None
    dense: str | None = None
    norm: str | None = None
    weights: Weights | None = None  # the vocabulary matrix and bias where no Linear holds it


def points_of(model: nn.Module, head: MlmHead) -> list[Point]:
    paths = (head.dense, head.norm, head.vocabulary if head.weights is None else None)
    return [Point(p) for p in paths if p and has(model, p)]


def _transform(ctx: Ctx, x: torch.Tensor, head: MlmHead) -> torch.Tensor:
    """dense -> activation -> LayerNorm: ``(T, d)``."""
    rec, name = ctx.rec, ctx.card.main.name
    assert head.dense and head.norm
    dense = rec.add("head: dense", "head", ops.project(x, module(ctx.model, head.dense)), stack=name,
                    point=Point(head.dense))
    active = rec.add(f"head: {head.activation}", "head", ops.activation(head.activation)(dense), stack=name)
    norm = module(ctx.model, head.norm)
    eps = norm.eps if isinstance(norm, nn.LayerNorm) else 1e-12
    normed, _, _ = ops.layer_norm(active, ops.weight(norm), ops.weight(norm, "bias"), eps)
    return rec.add("head: LayerNorm", "head", normed, stack=name, point=Point(head.norm))


def head_logits(ctx: Ctx, x: torch.Tensor, head: MlmHead) -> torch.Tensor:
    """The read position's logits ``(V,)`` from the last stream ``(T, d)``."""
    h = _transform(ctx, x, head) if head.dense else x
    row = h[ctx.read:ctx.read + 1]
    if head.weights is not None:
        w, b = head.weights(ctx.model)
        logits, point = (row @ w + b if b is not None else row @ w)[0], None
    else:
        assert head.vocabulary
        logits, point = ops.project(row, module(ctx.model, head.vocabulary))[0], Point(head.vocabulary)
    return ctx.rec.add("logits (the read position)", "logits", logits, stack=ctx.card.main.name,
                       axes=("vocabulary",), point=point, view=read_row(ctx))
