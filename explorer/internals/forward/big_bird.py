"""BigBird: BERT's embeddings, post-LN blocks and masked-LM head, with block-sparse attention in the encoder.

An input of at most ``(5 + 2 num_random_blocks) x block_size`` tokens (448 for the published config, past the
step-through's 64) runs full attention: transformers switches the model to ``original_full`` before its layers,
and each mask says so. A model that did run block-sparse (a tiny block size) is refused in words."""

from __future__ import annotations

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward.bert import Bert
from explorer.internals.forward.bigbird_pegasus import fallback_note, refuse_block_sparse
from explorer.internals.forward.family import Ctx

__all__ = ["BIG_BIRD", "BigBird"]


class BigBird(Bert):
    def walk(self, ctx: Ctx) -> torch.Tensor | None:
        refuse_block_sparse(ctx, ctx.found.prefix.rstrip("."), "BigBird")  # the base model keeps attention_type
        return super().walk(ctx)

    def mask_note(self, ctx: Ctx, stack: Stack, i: int, cross: bool) -> str:
        return fallback_note(ctx, stack, i, cross)


BIG_BIRD = BigBird()
