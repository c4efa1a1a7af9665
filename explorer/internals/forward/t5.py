"""T5: token embeddings only (no position table), pre-norm blocks of RMSNorm without a mean or a bias, unscaled
scores plus a learned bias per bucket of relative distance (computed from layer 0's table, reused by every layer;
both directions in the encoder, looking back only in the decoder), the encoder's stack, then the decoder's with
cross-attention to the encoder's output, and a tied head that reads the stream times d_model ** -0.5."""

from __future__ import annotations

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward import ops
from explorer.internals.forward.family import Ctx, Family, linear_head, linear_head_points
from explorer.internals.forward.hooks import Point

__all__ = ["T5", "T5Family"]


class T5Family(Family):
    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        e = stack.embeddings
        return ctx.rec.add("token embedding", "embed", ctx.table(e.token, ctx.ids[stack.name]), stack=stack.name,
                           point=ctx.point(stack, e.token))

    def bias(self, ctx: Ctx, stack: Stack, i: int, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor | None:
        """Layer 0's table read at the bucket of each (query, key) distance: ``(heads, T, S)``."""
        table_path = stack.block.bias
        if stack.positions.kind != "relative-buckets" or table_path is None:
            return None
        numbers, device, t, s = ctx.numbers.positions, ctx.ids[stack.name].device, q.shape[1], k.shape[1]
        relative = torch.arange(s, device=device)[None, :] - torch.arange(t, device=device)[:, None]
        buckets = ops.t5_buckets(relative, bidirectional=stack.name == "encoder", buckets=int(numbers.buckets or 32),
                                 max_distance=int(numbers.max_distance or 128))
        bias = ctx.table(table_path, buckets).permute(2, 0, 1)
        return ctx.rec.add("relative position bias (bucketed)", "position", bias, stack=stack.name, layer=i,
                           axes=("head", "query", "key"), point=Point(ctx.found.path(table_path)),
                           view=lambda v: v.permute(2, 0, 1),
                           note=f"{numbers.buckets} buckets up to distance {numbers.max_distance}")

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        if ctx.found.head is None:
            return None
        rescale = ctx.numbers.logits_rescale
        if rescale:
            x = ctx.rec.add(f"stream × d_model^-0.5 ({rescale:.4g})", "head", x * rescale, stack=ctx.card.main.name)
        return linear_head(ctx, x)

    def head_points(self, ctx: Ctx) -> list[Point]:
        return linear_head_points(ctx)


T5 = T5Family()
