"""One training loss per family, computed where the predictions are.

The masked-LM head runs only on the positions that have a label (15% of them): the vocabulary
projection is most of a tiny model's compute, and positions without a label add nothing to the
loss. The loss equals transformers' own (cross-entropy over labelled positions, mean), which
``tests/test_losses.py`` checks against ``model(**batch, labels=...)``.

A family maps ``(model, batch)`` to a :class:`Loss`: the scalar to minimise, its parts, and the
count of labelled positions the model got right (masked-token accuracy where it means something).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from explorer.core.errors import ExplorerError
from explorer.training.examples import IGNORE

__all__ = ["Loss", "gathered_mlm", "mlm", "mlm_head", "sentence_head"]


@dataclass
class Loss:
    """``total`` (a tensor with grad); ``parts``: named float losses; accuracy counts over labelled positions."""

    total: torch.Tensor
    parts: dict[str, float] = field(default_factory=dict)
    predicted: int = 0
    correct: int = 0


def _module(model: nn.Module, names: tuple[str, ...]) -> nn.Module | None:
    modules = dict(model.named_modules())
    return next((modules[n] for n in names if n in modules), None)


def mlm_head(model: nn.Module) -> nn.Module:
    """The masked-LM prediction head (transform + vocabulary projection) of a transformers MLM."""
    head = _module(model, ("cls.predictions", "lm_head", "predictions", "cls"))
    if head is None:
        raise ExplorerError(f"{type(model).__name__} has no masked-LM head; pick a masked-LM objective.")
    return head


def sentence_head(model: nn.Module) -> nn.Module | None:
    """NSP's or SOP's two-way classifier over the pooled [CLS] vector, if the model has one."""
    return _module(model, ("cls.seq_relationship", "sop_classifier"))


def gathered_mlm(head: nn.Module, hidden: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, int, int]:
    """Cross-entropy of ``head`` on labelled positions only: (loss, predicted, correct)."""
    where = labels != IGNORE  # (B, T)
    logits = head(hidden[where])  # (N, V): N labelled positions
    target = labels[where]  # (N,)
    if target.numel() == 0:  # a batch with nothing masked (tiny windows): no signal, zero loss with grad
        return hidden.sum() * 0.0, 0, 0
    loss = F.cross_entropy(logits.float(), target)
    return loss, int(target.numel()), int((logits.argmax(-1) == target).sum())


def mlm(model: nn.Module, batch: dict[str, torch.Tensor]) -> Loss:
    """Masked LM, plus NSP/SOP when the batch has sentence labels (BERT, RoBERTa, ALBERT)."""
    kwargs: dict[str, torch.Tensor] = {k: batch[k] for k in ("input_ids", "attention_mask") if k in batch}
    if "sentence_label" in batch:
        kwargs["token_type_ids"] = batch["token_type_ids"]
    body: Any = model.base_model  # every transformers model exposes its encoder here
    out = body(**kwargs)
    loss, n, correct = gathered_mlm(mlm_head(model), out.last_hidden_state, batch["labels"])
    parts = {"mlm": float(loss.detach())}
    total = loss
    if "sentence_label" in batch:
        head = sentence_head(model)
        if head is None or getattr(out, "pooler_output", None) is None:
            raise ExplorerError(f"{type(model).__name__} has no sentence head for NSP/SOP.")
        logits = head(out.pooler_output)  # (B, 2)
        sent = F.cross_entropy(logits.float(), batch["sentence_label"])
        parts["sentence"] = float(sent.detach())
        total = total + sent
    return Loss(total, parts, n, correct)
