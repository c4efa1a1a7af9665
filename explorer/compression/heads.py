"""Structured head pruning: the least important attention heads switched off, by a named proxy.

Importance proxy (data-free, deterministic): the Frobenius norm of a head's slice of the attention
**output projection**, ``‖W_O[:, h·d:(h+1)·d]‖`` (BERT's ``attention.output.dense``, Gemma's
``self_attn.o_proj``). A head contributes to the residual stream only through that slice, so a head
whose slice is small moves the output least. Michel et al. (2019, "Are Sixteen Heads Really Better
than One?") rank heads by the gradient of a task loss with respect to a head mask instead; that needs
a labelled loss this lab does not have for MiniLM, so the proxy is used for every model and named so.

Pruning ``heads-N`` ranks every head of every layer together and zeroes the slices of the N% lowest
(rounded down), which removes exactly their contribution. The matrices keep their shape (transformers 5
no longer has ``prune_heads``; Gemma's grouped key/value heads make physical removal model-specific), so
the dense size on disk does not change: only the work a sparse kernel could skip does.

>>> import torch
>>> layer = torch.nn.Linear(8, 4)            # 2 heads of 4 dims
>>> head_norms(layer, 2).shape
torch.Size([2])
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from explorer.architecture.modeltypes import num_heads
from explorer.core.errors import ExplorerError

__all__ = ["OUTPUT_PROJECTIONS", "HeadScore", "head_norms", "output_projections", "prune", "scores"]

# Name endings of the attention output projection, per family (BERT/MiniLM, Gemma/Llama, BART/OPT, GPT-NeoX).
OUTPUT_PROJECTIONS = ("attention.output.dense", "self_attn.o_proj", "self_attn.out_proj", "attention.dense")


@dataclass(frozen=True)
class HeadScore:
    """One head's importance under the proxy."""

    layer: str  # the output projection's module name
    head: int
    score: float


def output_projections(model: torch.nn.Module) -> dict[str, torch.nn.Linear]:
    """The attention output projection of every layer, by module name."""
    return {name: m for name, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and name.endswith(OUTPUT_PROJECTIONS)}


def head_norms(layer: torch.nn.Linear, n_heads: int) -> torch.Tensor:
    """(n_heads,) Frobenius norm of each head's column block of ``layer.weight`` (out, n_heads * d)."""
    w = layer.weight.detach().float()  # (hidden, heads * head_dim)
    return w.reshape(w.shape[0], n_heads, -1).pow(2).sum(dim=(0, 2)).sqrt()


def _heads_of(model: torch.nn.Module) -> int:
    n = num_heads(getattr(model, "config", None) or {})
    if not n:
        raise ExplorerError("heads-N needs a transformer whose config names its attention heads; this model has "
                            "none. Pick prune-N or a cast instead.")
    return n


def scores(model: torch.nn.Module) -> list[HeadScore]:
    """Every head's proxy score, lowest first (ties: earlier layer, lower head first)."""
    n, found = _heads_of(model), output_projections(model)
    if not found:
        raise ExplorerError("heads-N found no attention output projection in this model (it knows BERT-, "
                            "Gemma-, BART- and GPT-NeoX-style layers). Pick prune-N or a cast instead.")
    out = [HeadScore(name, h, float(v)) for name, layer in found.items()
           for h, v in enumerate(head_norms(layer, n))]
    return sorted(out, key=lambda s: s.score)


def prune(model: torch.nn.Module, percent: int) -> list[HeadScore]:
    """Zero the output-projection slices of the ``percent``% lowest-scoring heads, in place (the caller
    passes a copy); returns the heads switched off."""
    ranked, n = scores(model), _heads_of(model)
    gone = ranked[: len(ranked) * percent // 100]
    layers = output_projections(model)
    with torch.no_grad():
        for s in gone:
            layer = layers[s.layer]
            d = layer.in_features // n
            layer.weight[:, s.head * d:(s.head + 1) * d] = 0
    return gone
