"""The causal family: GPT's next-token objective on the lab's windows.

The targets are the strategy's own (``gpt-clm``, :func:`explorer.objectives.decoding.causal_lm`:
position t predicts token t+1), drawn through :func:`explorer.training.examples.draw`. The window
is fed as ``[CLS] x``: ``[CLS]`` plays GPT's beginning-of-text token, and the window's closing
``[SEP]`` is dropped, because most windows are cut from the middle of a document and a model
taught to predict an end there would learn to stop at random. (The Decoding lab feeds a lab
checkpoint ``[CLS] prompt``: :func:`explorer.tasks.generation.prompt.encode_prompt` drops an
end token the tokenizer appends.)

Loss: next-token cross-entropy over every non-pad position that has a next token (mean), equal
to ``GPT2LMHeadModel(..., labels=input_ids)`` with padding labelled -100 (``tests/test_causal.py``).
Accuracy: next-token accuracy over those positions. The model is the catalog's GPT-2, scaled
down by the lab's sizes (:func:`explorer.training.models.build`); every position is a target,
so the per-token compute is the cost model's :func:`explorer.training.lossfamilies.forward_flops`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from explorer.core.handles import Tokenizer
from explorer.objectives.base import MaskedLMResult, Vocab
from explorer.training import examples
from explorer.training.examples import IGNORE
from explorer.training.losses import Loss
from explorer.training.recipes import Recipe

__all__ = ["features", "frame", "loss"]


def frame(window: Sequence[str]) -> list[str]:
    """``[CLS] x [SEP]`` -> ``[CLS] x``: a cut window has no end to predict."""
    tokens = list(window)
    return tokens[:-1] if len(tokens) > 2 and tokens[-1] == "[SEP]" else tokens


def features(recipe: Recipe, window: Sequence[str], seed: int, index: int, epoch: int, tok: Tokenizer,
             vocab: Vocab) -> dict[str, Any]:
    """``input_ids`` (the window) and ``labels`` (the next token at each position; IGNORE at the last)."""
    result = examples.draw(recipe, recipe.strategy, frame(window), seed, index, epoch, vocab)
    assert isinstance(result, MaskedLMResult)
    return {"input_ids": examples.ids(tok, result.input_tokens), "labels": examples.ids(tok, result.targets)}


def loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> Loss:
    """Next-token cross-entropy (mean over positions with a next token) and next-token accuracy."""
    labels = batch["labels"]  # (B, T): labels[:, t] = input_ids[:, t + 1], IGNORE at the end and on padding
    where = labels != IGNORE  # (B, T)
    lm: Any = model  # GPT2LMHeadModel: the transformer, then the LM head only where there is a target
    # (B, T, H)
    hidden = lm.base_model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    head = lm.get_output_embeddings()
    logits = head(hidden[where])  # (N, V)
    target = labels[where]  # (N,)
    if target.numel() == 0:
        return Loss(hidden.sum() * 0.0, {"causal": 0.0})
    total = F.cross_entropy(logits.float(), target)
    correct = int((logits.argmax(-1) == target).sum())
    return Loss(total, {"causal": float(total.detach())}, int(target.numel()), correct)
