"""Gemma 3: token embeddings times sqrt(d_model), sandwich RMSNorms scaling by (1 + w), queries and keys
normalised per head and rotated (the local base on sliding-window layers, the global one on full-attention
layers), one key/value head shared by groups of query heads, scores scaled by query_pre_attn_scalar ** -0.5 and
masked to a window on local layers, a GeGLU MLP, a final norm, the tied head and optional soft-capping.

The sandwich, the (1 + w), the qk-norm, the rotation, the window and the gate are the card's (the shared
framework follows it); what is Gemma's own here is the embedding scale and the soft-capped readout."""

from __future__ import annotations

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward.family import Ctx, Family, linear_head, linear_head_points
from explorer.internals.forward.hooks import Point

__all__ = ["GEMMA3", "Gemma3"]


class Gemma3(Family):
    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        e, rec, name = stack.embeddings, ctx.rec, stack.name
        scale, seen = ctx.numbers.embed_scale, ctx.point(stack, e.token)
        x = rec.add("token embedding (table row)", "embed", ctx.table(e.token, ctx.ids[name]), stack=name,
                    point=None if scale else seen)
        if scale is None:
            return x
        factor = torch.tensor(scale, dtype=torch.float32)  # the model keeps sqrt(d) as a float32 buffer
        return rec.add(f"token embedding × √d_model ({float(factor):.4g})", "embed", x * factor, stack=name,
                       point=seen)

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        logits = linear_head(ctx, x)
        cap = ctx.numbers.final_softcap
        if logits is None or not cap:
            return logits
        return ctx.rec.add(f"logits soft-capped at {cap:g}", "logits", torch.tanh(logits / cap) * cap,
                           stack=ctx.card.main.name, axes=("vocabulary",))

    def head_points(self, ctx: Ctx) -> list[Point]:
        return linear_head_points(ctx)

GEMMA3 = Gemma3()
