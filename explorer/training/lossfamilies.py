"""The loss families a recipe names (``Recipe.loss``): how each turns a window into features, builds its model and
scores it.

One :class:`LossFamily` per way of training: the masked-LM family (BERT, RoBERTa, ALBERT and their
sentence heads) is here from the start; ELECTRA, SpanBERT, DistilBERT, the seq2seq denoisers and
the causal LM each add a module and one line to :data:`FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from explorer.architecture import cost
from explorer.core.errors import ExplorerError
from explorer.training import causal, distilbert, electra, examples, losses, models, seq2seq, spanbert

__all__ = ["FAMILIES", "LossFamily", "forward_flops", "get"]


def forward_flops(model: nn.Module, seq_len: int) -> float:
    """Forward FLOPs per token from the project's cost model (training: x3, see ``trainer``)."""
    config: Any = model.config  # every transformers model has one; the lab's custom pairs set it too
    return float(cost.per_token(model, config, seq_len).total)


@dataclass(frozen=True)
class LossFamily:
    """``features(recipe, window, seed, index, epoch, tok, vocab) -> dict`` of id lists;
    ``loss(model, batch) -> losses.Loss``; ``build(recipe, size, seed, device) -> nn.Module``;
    ``forward_flops(model, seq_len) -> float`` per token; ``teacher``: see :func:`explorer.training.trainer.start`."""

    features: Callable[..., dict[str, Any]]
    loss: Callable[[nn.Module, dict[str, torch.Tensor]], losses.Loss]
    build: Callable[..., nn.Module] = models.build
    forward_flops: Callable[[nn.Module, int], float] = forward_flops
    teacher: str | None = None  # the objective of the teacher this family distils from (build gets ``teacher=``)


FAMILIES: dict[str, LossFamily] = {
    "mlm": LossFamily(examples.features, losses.mlm),
    "electra": LossFamily(electra.features, electra.loss, electra.build, electra.forward_flops),
    "spanbert": LossFamily(spanbert.features, spanbert.loss, forward_flops=spanbert.forward_flops),
    "distill": LossFamily(examples.features, distilbert.loss, distilbert.build, distilbert.forward_flops,
                          teacher="mlm"),
    "seq2seq": LossFamily(seq2seq.features, seq2seq.loss, seq2seq.build, seq2seq.forward_flops),
    "causal": LossFamily(causal.features, causal.loss),
}


def get(name: str) -> LossFamily:
    """The family ``name``; one that has not landed says which can be trained."""
    if name not in FAMILIES:
        raise ExplorerError(f"The {name!r} objective cannot be trained yet; trainable families: {', '.join(FAMILIES)}.")
    return FAMILIES[name]
