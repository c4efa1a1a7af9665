"""GPT-2: token and learned position embeddings added, pre-LN blocks of fused Conv1D projections, causal
attention (scaled by 1/sqrt(d_head), and by 1/(layer + 1) where the config asks), a final LayerNorm and the tied
output head."""

from __future__ import annotations

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward.family import Ctx, Family, linear_head, linear_head_points
from explorer.internals.forward.hooks import Point

__all__ = ["GPT2", "Gpt2"]


class Gpt2(Family):
    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        e, rec, name, ids = stack.embeddings, ctx.rec, stack.name, ctx.ids[stack.name]
        x = rec.add("token embedding", "embed", ctx.table(e.token, ids), stack=name, point=ctx.point(stack, e.token))
        if stack.positions.kind == "learned-absolute" and e.positions:
            where = torch.arange(ids.shape[0], device=ids.device)
            x = x + rec.add("position embedding (learned)", "position", ctx.table(e.positions, where), stack=name,
                            point=ctx.point(stack, e.positions))
        return rec.add("embeddings summed", "embed", x, stack=name,
                       point=ctx.point(stack, stack.block.path, 0, "in"))

    def scale(self, ctx: Ctx, stack: Stack, i: int) -> float:
        scale = ctx.numbers.attention_scale
        return scale / (i + 1) if getattr(ctx.model.config, "scale_attn_by_inverse_layer_idx", False) else scale

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        return linear_head(ctx, x)

    def head_points(self, ctx: Ctx) -> list[Point]:
        return linear_head_points(ctx)


GPT2 = Gpt2()
