"""BERT's family (BERT, RoBERTa, XLM-RoBERTa, ELECTRA; the bundled MiniLM is a BERT without a head): token,
token-type and learned position embeddings summed and normalised, post-LN blocks, the masked-LM head's dense ->
GELU -> LayerNorm -> vocabulary projection.

RoBERTa-style models number positions from ``padding_idx + 1`` (a padding token keeps position ``padding_idx``).
"""

from __future__ import annotations

import torch
from torch import nn

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward import ops
from explorer.internals.forward.family import Ctx, Family, read_row
from explorer.internals.forward.hooks import Point
from explorer.internals.located import has, module

__all__ = ["BERT", "Bert"]

NORM_NAMES = ("LayerNorm", "layer_norm")  # BERT's and ELECTRA's head norm, RoBERTa's


def _positions(ctx: Ctx, ids: torch.Tensor) -> torch.Tensor:
    offset = ctx.numbers.positions.offset
    if not offset:
        return torch.arange(ids.shape[0], device=ids.device)
    pad = offset - 1
    real = (ids != pad).long()
    return torch.cumsum(real, 0) * real + pad


class Bert(Family):
    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        e, rec, name, ids = stack.embeddings, ctx.rec, stack.name, ctx.ids[stack.name]
        x = rec.add("token embedding", "embed", ctx.table(e.token, ids), stack=name,
                    point=ctx.point(stack, e.token))
        if e.token_types and has(ctx.model, ctx.found.path(e.token_types)):
            types = rec.add("token-type embedding (sentence A)", "embed",
                            ctx.table(e.token_types, torch.zeros_like(ids)), stack=name,
                            point=ctx.point(stack, e.token_types))
            x = x + types
        if stack.positions.kind == "learned-absolute" and e.positions:
            where = _positions(ctx, ids)
            pos = rec.add("position embedding (learned)", "position", ctx.table(e.positions, where), stack=name,
                          point=ctx.point(stack, e.positions), note=f"positions {int(where[0])} to {int(where[-1])}")
            x = x + pos
        summed = ctx.point(stack, e.norm, io="in") if e.norm else None
        x = rec.add("embeddings summed", "embed", x, stack=name, point=summed)
        if e.norm:
            x = self.norm(ctx, stack, e.norm, None, x, "embedding norm")
        if e.projection and has(ctx.model, ctx.found.path(e.projection)):
            x = rec.add("embeddings projected to the hidden size", "embed", ops.project(x, ctx.at(e.projection)),
                        stack=name, point=ctx.point(stack, e.projection))
        return x

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        """The masked-LM head: dense -> GELU -> LayerNorm -> the vocabulary (tied to the token embeddings)."""
        parts = _head_parts(ctx)
        if parts is None:
            return None
        transform, vocabulary, act = parts
        rec, name = ctx.rec, ctx.card.main.name
        dense = rec.add("head: dense", "head", ops.project(x, module(ctx.model, f"{transform}.dense")), stack=name,
                        point=Point(f"{transform}.dense"))
        active = rec.add(f"head: {act}", "head", ops.activation(act)(dense), stack=name)
        norm_path = next(f"{transform}.{n}" for n in NORM_NAMES if has(ctx.model, f"{transform}.{n}"))
        norm = module(ctx.model, norm_path)
        eps = norm.eps if isinstance(norm, nn.LayerNorm) else 1e-12
        normed, _, _ = ops.layer_norm(active, ops.weight(norm), ops.weight(norm, "bias"), eps)
        rec.add("head: LayerNorm", "head", normed, stack=name, point=Point(norm_path))
        logits = ops.project(normed[ctx.read:ctx.read + 1], module(ctx.model, vocabulary))[0]
        return rec.add("logits (the read position)", "logits", logits, stack=name, axes=("vocabulary",),
                       point=Point(vocabulary), view=read_row(ctx))

    def head_points(self, ctx: Ctx) -> list[Point]:
        parts = _head_parts(ctx)
        if parts is None:
            return []
        transform, vocabulary, _ = parts
        paths = [f"{transform}.dense", *(f"{transform}.{n}" for n in NORM_NAMES), vocabulary]
        return [Point(p) for p in paths if has(ctx.model, p)]


def _head_parts(ctx: Ctx) -> tuple[str, str, str] | None:
    """(the transform's path, the vocabulary projection's path, the transform's activation) of the MLM head:
    BERT's cls.predictions.transform, RoBERTa's lm_head, ELECTRA's generator_predictions."""
    found = next(((p, how) for p, how in ctx.card.readout.heads if has(ctx.model, p)), None)
    if ctx.found.head is None or found is None:
        return None
    path, how = found
    if how == "electra":
        return "generator_predictions", path, "gelu"
    if has(ctx.model, f"{path}.transform"):
        return f"{path}.transform", f"{path}.decoder", ctx.numbers.activation
    return path, f"{path}.decoder", "gelu"


BERT = Bert()
