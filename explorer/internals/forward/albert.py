"""ALBERT: BERT's embeddings in ``embedding_size`` features (narrower than the layers), normalised there, then
projected up to the hidden size (``encoder.embedding_hidden_mapping_in``); one post-LN layer whose weights every
layer uses, so layer i is the i-th call of the shared module, and each step of layer i is checked against that
call's value; the masked-LM head (dense -> activation -> LayerNorm back in ``embedding_size`` -> vocabulary).

The embeddings, the projection and the shared block are the card's (the BERT family and the shared framework
follow it); what is ALBERT's own here is its head."""

from __future__ import annotations

import torch

from explorer.internals.forward.bert import Bert
from explorer.internals.forward.family import Ctx
from explorer.internals.forward.hooks import Point
from explorer.internals.forward.mlmhead import MlmHead, head_logits, points_of

__all__ = ["ALBERT", "Albert"]


class Albert(Bert):
    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        if ctx.found.head is None:
            return None
        return head_logits(ctx, x, _head(ctx))

    def head_points(self, ctx: Ctx) -> list[Point]:
        return points_of(ctx.model, _head(ctx)) if ctx.found.head is not None else []


def _head(ctx: Ctx) -> MlmHead:
    path = ctx.found.head_path  # "predictions"
    return MlmHead(ctx.numbers.activation, f"{path}.decoder", f"{path}.dense", f"{path}.LayerNorm")


ALBERT = Albert()
