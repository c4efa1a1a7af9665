"""M2M-100: BART's layout with fixed sinusoidal positions, pre-LN blocks and a final LayerNorm in each stack
(``layer_norm``), token embeddings times sqrt(d_model) (``scale_embedding``), the tied head.

Positions are numbered as fairseq does, past the padding index: a real token at position p (from 1) reads
``padding_idx + p``, a padding token ``padding_idx`` (a row of zeros); the sinusoids are tensor2tensor's, all the
sines (frequencies ``1e4 ** (-j / (d/2 - 1))``) then all the cosines."""

from __future__ import annotations

import math

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward.bart import Bart
from explorer.internals.forward.family import Ctx

__all__ = ["M2M100", "M2M_100", "sinusoids"]

BASE = 10000.0


def sinusoids(positions: torch.Tensor, d: int, padding_idx: int | None) -> torch.Tensor:
    """(T, d): ``[sin(p w_j), cos(p w_j)]`` with ``w_j = BASE ** (-j / (d/2 - 1))``; the padding row is zeros."""
    half = d // 2
    step = math.log(BASE) / (half - 1)
    freq = torch.exp(torch.arange(half, device=positions.device).float() * -step)
    angles = positions.float()[:, None] * freq[None, :]
    out = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
    if d % 2:
        out = torch.cat([out, out.new_zeros(out.shape[0], 1)], dim=1)
    return out if padding_idx is None else out.masked_fill((positions == padding_idx)[:, None], 0.0)


class M2M100(Bart):
    def positions(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        if stack.positions.kind != "sinusoidal":
            return super().positions(ctx, stack)
        e, ids = stack.embeddings, ctx.ids[stack.name]
        assert e.positions
        table = ctx.at(e.positions)
        pad = getattr(table, "padding_idx", None)
        real = (ids != pad).long() if pad is not None else torch.ones_like(ids)
        where = torch.cumsum(real, 0) * real + (pad or 0)
        d = int(getattr(table, "embedding_dim", ctx.found.shape(stack.name).d_model))
        return ctx.rec.add("position encoding (sinusoidal, fixed)", "position", sinusoids(where, d, pad),
                           stack=stack.name, point=ctx.point(stack, e.positions),
                           note=f"positions {int(where[0])} to {int(where[-1])}, numbered past padding_idx {pad}")


M2M_100 = M2M100()
