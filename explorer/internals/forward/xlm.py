"""XLM: token and learned position embeddings added and normalised (``layer_norm_emb``), post-LN layers kept as
parallel lists (``attentions``, ``layer_norm1``, ``ffns``, ``layer_norm2``) rather than block modules, a GELU (or
ReLU) MLP, and a vocabulary projection (``pred_layer.proj``) straight from the last stream, with no transform.

The language embedding is added only when the forward is given each token's language (``langs``); the masked-LM
forward the step-through runs gives none, so the walk leaves it out and says so. With ``sinusoidal_embeddings``
the position table holds frozen sinusoids, read like any table."""

from __future__ import annotations

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward.bert import Bert
from explorer.internals.forward.family import Ctx
from explorer.internals.forward.hooks import Point
from explorer.internals.forward.mlmhead import MlmHead, head_logits, points_of
from explorer.internals.located import has

__all__ = ["XLM", "Xlm"]

HEAD = MlmHead("gelu", vocabulary="pred_layer.proj")


class Xlm(Bert):
    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        e, rec, name, ids = stack.embeddings, ctx.rec, stack.name, ctx.ids[stack.name]
        assert e.positions and e.norm
        x = rec.add("token embedding", "embed", ctx.table(e.token, ids), stack=name, point=ctx.point(stack, e.token))
        where = torch.arange(ids.shape[0], device=ids.device)
        sines = bool(getattr(ctx.model.config, "sinusoidal_embeddings", False))
        pos = rec.add("position embedding (" + ("sinusoidal, frozen" if sines else "learned") + ")", "position",
                      ctx.table(e.positions, where), stack=name, point=ctx.point(stack, e.positions))
        langs = e.token_types and has(ctx.model, ctx.found.path(e.token_types))
        note = "no language embedding: the forward is given no langs" if langs else ""
        x = rec.add("embeddings summed", "embed", x + pos, stack=name, point=ctx.point(stack, e.norm, io="in"),
                    note=note)
        return self.norm(ctx, stack, e.norm, None, x, "embedding norm")

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        return head_logits(ctx, x, HEAD) if ctx.found.head is not None else None

    def head_points(self, ctx: Ctx) -> list[Point]:
        return points_of(ctx.model, HEAD) if ctx.found.head is not None else []


XLM = Xlm()
