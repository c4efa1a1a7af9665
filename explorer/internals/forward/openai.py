"""GPT (GPT-1, ``openai-gpt``): token and learned position embeddings added, post-LN blocks (normalised after each
residual add, as BERT is, with causal attention) of fused Conv1D projections, no final norm, and the tied output
head reading the last block's output directly.

Its ``afn="gelu"`` is the tanh approximation (transformers' ``ACT_FNS`` maps it to ``gelu_new``): the walk runs the
function the model runs and names it so."""

from __future__ import annotations

from dataclasses import replace

import torch

from explorer.internals.forward.family import Ctx
from explorer.internals.forward.gpt2 import Gpt2

__all__ = ["OPENAI_GPT", "OpenAIGPT"]

AFN = {"gelu": "gelu_new"}  # openai-gpt's own names -> the function each runs


class OpenAIGPT(Gpt2):
    def walk(self, ctx: Ctx) -> torch.Tensor | None:
        numbers = ctx.numbers
        ctx.found = replace(ctx.found, numbers=replace(numbers, activation=AFN.get(numbers.activation,
                                                                                   numbers.activation)))
        return super().walk(ctx)


OPENAI_GPT = OpenAIGPT()
