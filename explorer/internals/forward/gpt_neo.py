"""GPT-Neo: GPT-2's embeddings, pre-LN blocks and head (separate q/k/v projections without biases), causal
attention whose layers alternate global and local (``attention_layers``: a local layer sees the ``window_size``
tokens up to itself), and scores that are not scaled by 1/sqrt(d_head).

The window and the missing scale are the card's (the shared framework follows them); what is GPT-Neo's own here is
saying which kind of layer each mask belongs to."""

from __future__ import annotations

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward.family import Ctx
from explorer.internals.forward.gpt2 import Gpt2

__all__ = ["GPT_NEO", "GptNeo"]


class GptNeo(Gpt2):
    def mask_note(self, ctx: Ctx, stack: Stack, i: int, cross: bool) -> str:
        shape = ctx.found.shape(stack.name)
        window = shape.windows[i]
        if shape.layer_kinds[i] == "local" and window is not None:
            return f"local layer: each token sees itself and the {window - 1} tokens before it"
        return f"{shape.layer_kinds[i]} layer: each token sees every token up to itself"


GPT_NEO = GptNeo()
