"""CTRL: token embeddings times sqrt(d_model), plus fixed sinusoidal positions (no table of weights: the sines of
each pair's angle in the first half of the features, the cosines in the second), pre-LN blocks, causal attention
scaled by 1/sqrt(d_head), a ReLU MLP, a final LayerNorm and the tied output head with a bias."""

from __future__ import annotations

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward.family import Ctx, Family, linear_head, linear_head_points
from explorer.internals.forward.hooks import Point

__all__ = ["CTRL", "Ctrl", "sinusoids"]

BASE = 10000.0


def sinusoids(positions: torch.Tensor, d: int) -> torch.Tensor:
    """(T, d) as CTRL computes them: angle ``pos / BASE ** (2 (i // 2) / d)`` of feature i, the sines of the even
    features then the cosines of the odd ones."""
    i = torch.arange(d, device=positions.device).float()[None, :]
    angles = positions.float()[:, None] * (1 / torch.pow(BASE, (2 * (i // 2)) / d))
    return torch.cat([torch.sin(angles[:, 0::2]), torch.cos(angles[:, 1::2])], dim=-1)


class Ctrl(Family):
    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        e, rec, name, ids = stack.embeddings, ctx.rec, stack.name, ctx.ids[stack.name]
        x = rec.add("token embedding (table row)", "embed", ctx.table(e.token, ids), stack=name,
                    point=ctx.point(stack, e.token))
        scale = ctx.numbers.embed_scale
        if scale:
            x = rec.add(f"token embedding × √d_model ({scale:.4g})", "embed", x * scale, stack=name)
        where = torch.arange(ids.shape[0], device=ids.device)
        if stack.positions.kind == "sinusoidal":
            pos = rec.add("position encoding (sinusoidal, fixed)", "position", sinusoids(where, x.shape[-1]),
                          stack=name, note=f"positions 0 to {int(where[-1])}: sin then cos, base {BASE:,.0f}")
            x = x + pos
        return rec.add("embeddings summed", "embed", x, stack=name, point=ctx.point(stack, stack.block.path, 0, "in"))

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        return linear_head(ctx, x)

    def head_points(self, ctx: Ctx) -> list[Point]:
        return linear_head_points(ctx)


CTRL = Ctrl()
