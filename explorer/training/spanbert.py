"""SpanBERT's family: span masking plus the span boundary objective (SBO).

Joshi et al. (2020): the ``spanbert`` strategy of :mod:`explorer.objectives` masks whole-word
spans (geometric lengths, 15% of tokens, 80/10/10 decided per span). Two losses share one encoder:

- MLM: every masked token from its own hidden state (the BERT head);
- SBO: every span token from the hidden states of the two tokens just *outside* its span plus
  an embedding of its position inside the span
  (:class:`explorer.architecture.custom_models.SpanBoundaryHead`); the SBO vector goes through
  the MLM decoder (tied to the token embeddings), so both losses predict in the same vocabulary.

Loss = MLM + SBO, as in the paper. Reported accuracy is the MLM's over masked tokens; SBO's is
``parts["sbo_accuracy"]``. The span facts come from the strategy's result (``spans``,
``boundaries``, ``span_positions``): one home for the rule.

>>> from explorer.training import recipes, vocab
>>> tok = vocab.tokenizer()
>>> window = ["[CLS]", *tok.tokenize("The list is sorted in place and then printed to the screen."), "[SEP]"]
>>> ex = features(recipes.get("spanbert"), window, 0, 0, 0, tok, vocab.objective_vocab())
>>> sorted(ex)
['input_ids', 'labels', 'sbo_left', 'sbo_position', 'sbo_right']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from explorer.architecture import cost
from explorer.architecture.custom_models import MAX_SPAN
from explorer.core.handles import Tokenizer
from explorer.objectives.base import Vocab
from explorer.objectives.spans import SpanMaskResult
from explorer.training import examples, losses
from explorer.training.losses import Loss
from explorer.training.recipes import Recipe

__all__ = ["features", "forward_flops", "loss", "sbo_logits", "span_features"]


def span_features(drawn: SpanMaskResult) -> dict[str, list[int]]:
    """Per token (T,): the left and right boundary positions of its span and its 1-based place in it.

    0 everywhere outside spans (``sbo_position`` 0 = no SBO target; padding adds 0s too).
    Boundaries outside the window (a span touching its edge) are clipped to it; the lab's
    windows are framed by ``[CLS]``/``[SEP]``, which are never masked, so that does not happen.
    """
    n = len(drawn.original_tokens)
    left, right, position = [0] * n, [0] * n, [0] * n
    for (start, end), (lo, hi) in zip(drawn.spans, drawn.boundaries, strict=True):
        for i in range(start, end):
            left[i], right[i] = min(max(lo, 0), n - 1), min(max(hi, 0), n - 1)
            position[i] = int(drawn.span_positions[i] or 0)
    return {"sbo_left": left, "sbo_right": right, "sbo_position": position}


def features(recipe: Recipe, window: Sequence[str], seed: int, index: int, epoch: int, tok: Tokenizer,
             vocab: Vocab) -> dict[str, Any]:
    """Id lists: the span-masked input, the MLM labels and the SBO boundaries/positions."""
    drawn = examples.draw(recipe, recipe.strategy, window, seed, index, epoch, vocab)
    assert isinstance(drawn, SpanMaskResult)
    return {"input_ids": examples.ids(tok, drawn.input_tokens), "labels": examples.ids(tok, drawn.targets),
            **span_features(drawn)}


def sbo_logits(model: nn.Module, hidden: torch.Tensor,
               batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(S, V) SBO logits and (S,) targets for every span token of the batch.

    ``hidden`` (B, T, H) is the encoder's last layer. A span token's place beyond ``MAX_SPAN``
    (a 10-word span split into more pieces) shares the last position embedding.
    """
    net: Any = model
    where = batch["sbo_position"] > 0  # (B, T): span tokens
    rows = where.nonzero()[:, 0]  # (S,): batch row of each span token
    left = hidden[rows, batch["sbo_left"][where]]  # (S, H): x_{s-1}
    right = hidden[rows, batch["sbo_right"][where]]  # (S, H): x_{e+1}
    place = batch["sbo_position"][where].clamp(max=MAX_SPAN) - 1  # (S,): 0-based position in the span
    vectors = net.sbo_head(left, right, place)  # (S, H)
    return net.mlm.cls.predictions.decoder(vectors), batch["labels"][where]  # (S, V), (S,)


def loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> Loss:
    """MLM + SBO; accuracy counts the MLM's masked tokens.

    ``parts``: ``mlm``, ``sbo``, ``sbo_accuracy``, ``span_tokens`` (S, equal to the MLM's count).
    """
    net: Any = model
    # (B, T, H)
    hidden = net.mlm.bert(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    mlm, n, correct = losses.gathered_mlm(net.mlm.cls.predictions, hidden, batch["labels"])
    logits, target = sbo_logits(model, hidden, batch)  # (S, V), (S,)
    if target.numel():
        sbo = F.cross_entropy(logits.float(), target)
        sbo_correct = int((logits.argmax(-1) == target).sum())
    else:  # nothing masked in this batch: no signal, zero loss with grad
        sbo, sbo_correct = hidden.sum() * 0.0, 0
    parts = {"mlm": float(mlm.detach()), "sbo": float(sbo.detach()),
             "sbo_accuracy": sbo_correct / max(int(target.numel()), 1), "span_tokens": float(target.numel())}
    return Loss(mlm + sbo, parts, n, correct)


def forward_flops(model: nn.Module, seq_len: int) -> float:
    """Forward FLOPs per token of the whole SpanBERT (encoder, MLM head, SBO head).

    As for every lab model, the cost model counts the heads at every token (the losses run
    them only on the ~15% masked ones), so objectives compare on one convention.
    """
    net: Any = model
    return float(cost.per_token(model, net.mlm.config, seq_len).total)

