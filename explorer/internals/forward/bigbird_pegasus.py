"""BigBird-Pegasus: Pegasus's layout (pre-LN blocks, token embeddings times sqrt(d_model), learned positions from
row 0, and after the last layer of each stack a LayerNorm that transformers names ``layernorm_embedding``), BART's
walk otherwise, with ``final_logits_bias`` on the tied head.

The encoder's attention is block-sparse (a window, global and random blocks), but an input of at most
``(5 + 2 num_random_blocks) x block_size`` tokens (704 for the published config, past the step-through's 64) runs
full attention instead: transformers switches the encoder to ``original_full``, and the walk shows that, saying so
at each encoder mask. A model that did run block-sparse (a tiny block size) is refused in words. BigBird's encoder
(``big_bird.py``) shares both rules (:func:`refuse_block_sparse`, :func:`fallback_note`)."""

from __future__ import annotations

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.architecture.modeltypes import bigbird_falls_back
from explorer.core.errors import ExplorerError
from explorer.internals.forward.bart import Bart
from explorer.internals.forward.family import Ctx
from explorer.internals.located import module

__all__ = ["BIGBIRD_PEGASUS", "BigBirdPegasus", "fallback_note", "refuse_block_sparse"]


def refuse_block_sparse(ctx: Ctx, owner: str, label: str) -> None:
    """An ExplorerError when the module at ``owner`` (the one keeping ``attention_type``) ran block-sparse."""
    encoder = ctx.card.stacks[0]
    if getattr(module(ctx.model, owner), "attention_type", "original_full") != "block_sparse":
        return
    blocks = ctx.numbers.block_sparse or (0, 0)
    raise ExplorerError(f"This {label} ran block-sparse attention on {len(ctx.ids[encoder.name])} tokens (blocks "
                        f"of {blocks[0]}, {blocks[1]} random): the step-through recomputes full attention only. "
                        f"Shorten the text to at most {(5 + 2 * blocks[1]) * blocks[0]} tokens, or pick a config "
                        "with larger blocks.")


def fallback_note(ctx: Ctx, stack: Stack, i: int, cross: bool) -> str:
    """At a block-sparse layer that ran full attention, why."""
    blocks = ctx.numbers.block_sparse
    kind = ctx.found.shape(stack.name).layer_kinds[i]
    if cross or kind != "block-sparse" or blocks is None:
        return ""
    t, (size, rand) = len(ctx.ids[stack.name]), blocks
    if not bigbird_falls_back(t, size, rand):
        return ""
    return (f"block-sparse attention falls back to full attention at this length: {t} tokens <= "
            f"(5 + 2 x {rand}) x {size} = {(5 + 2 * rand) * size}, so every token attends to every token")


class BigBirdPegasus(Bart):
    def walk(self, ctx: Ctx) -> torch.Tensor | None:
        refuse_block_sparse(ctx, ctx.found.path(ctx.card.stacks[0].name), "BigBird-Pegasus")
        return super().walk(ctx)

    def mask_note(self, ctx: Ctx, stack: Stack, i: int, cross: bool) -> str:
        return fallback_note(ctx, stack, i, cross)


BIGBIRD_PEGASUS = BigBirdPegasus()
