"""DistilBERT: BERT's post-LN blocks under its own module names (``q_lin`` ... ``out_lin``, ``sa_layer_norm``,
``ffn.lin1``/``lin2``, ``output_layer_norm``), token and position embeddings only (no token types), and its head
(``vocab_transform`` -> activation -> ``vocab_layer_norm`` -> ``vocab_projector``, at the root of the head class).

With ``sinusoidal_pos_embds`` the position table is filled with sinusoids at initialisation and frozen: the step
computes them from the formula, and the comparison with the table's lookup shows they are the same.

>>> [round(v, 4) for v in sinusoidal_table(2, 4)[1].tolist()]
[0.8415, 0.5403, 0.01, 0.9999]
"""

from __future__ import annotations

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward.bert import Bert
from explorer.internals.forward.family import Ctx
from explorer.internals.forward.hooks import Point
from explorer.internals.forward.mlmhead import MlmHead, head_logits, points_of

__all__ = ["DISTILBERT", "DistilBert", "sinusoidal_table"]


def sinusoidal_table(n: int, dim: int) -> torch.Tensor:
    """``(n, dim)``: position p, feature j is ``sin`` (even j) or ``cos`` (odd j) of ``p / 10000^(2 (j // 2) / dim)``
    (DistilBERT's and XLM's table, computed in float64 as theirs is)."""
    j = torch.arange(dim, dtype=torch.float64)
    angles = torch.arange(n, dtype=torch.float64)[:, None] / torch.pow(10000.0, 2 * (j // 2) / dim)[None, :]
    return torch.where(j.long() % 2 == 0, angles.sin(), angles.cos()).float()


class DistilBert(Bert):
    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        if not getattr(ctx.model.config, "sinusoidal_pos_embds", False):
            return super().embed(ctx, stack)
        e, rec, name, ids = stack.embeddings, ctx.rec, stack.name, ctx.ids[stack.name]
        assert e.positions and e.norm
        x = rec.add("token embedding", "embed", ctx.table(e.token, ids), stack=name, point=ctx.point(stack, e.token))
        table = sinusoidal_table(ids.shape[0], x.shape[-1]).to(x.device)
        pos = rec.add("position embedding (sinusoidal, frozen)", "position", table, stack=name,
                      point=ctx.point(stack, e.positions), note="sin on even features, cos on odd ones")
        x = rec.add("embeddings summed", "embed", x + pos, stack=name, point=ctx.point(stack, e.norm, io="in"))
        return self.norm(ctx, stack, e.norm, None, x, "embedding norm")

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        if ctx.found.head is None:
            return None
        return head_logits(ctx, x, _head(ctx))

    def head_points(self, ctx: Ctx) -> list[Point]:
        return points_of(ctx.model, _head(ctx)) if ctx.found.head is not None else []


def _head(ctx: Ctx) -> MlmHead:
    return MlmHead(ctx.numbers.activation, "vocab_projector", "vocab_transform", "vocab_layer_norm")


DISTILBERT = DistilBert()
