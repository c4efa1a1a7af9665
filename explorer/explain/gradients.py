"""Saliency from one backward pass: the gradient norm and gradient x input of every shown token.

The gradient of the explained number with respect to each token's input embedding (``(S, T, d)``) comes from
one forward and one backward. A token in several rows (the text beside a target and beside a foil) has one
gradient: the sum over its places, since its embedding feeds every row. Per token:

- gradient norm ``|g|`` (how sensitive the number is to that token, unsigned): with a foil it is the norm of
  the gradient of the difference (Yin and Neubig's contrastive gradient norm), not a difference of norms;
- gradient x input ``g . e`` (signed; linear in the number, so with a foil it is exactly the target's minus
  the foil's).

Only ``torch.autograd.grad`` is called, with respect to the embeddings: the model's parameters (shared with
other requests) never receive a ``.grad``.
"""

from __future__ import annotations

import torch

from explorer.explain.frame import Frame
from explorer.explain.scorer import Embedder, batch_of, score
from explorer.runtime.offload import input_device

__all__ = ["embedding_gradient", "grad_input", "grad_norm", "per_token"]


def embedding_gradient(model: torch.nn.Module, frame: Frame) -> tuple[torch.Tensor, torch.Tensor, float]:
    """(gradient ``(S, T, d)``, embeddings ``(S, T, d)``, the explained number) of one frame, float32 on the CPU."""
    embedder = Embedder(model)
    batch = batch_of([frame], input_device(model))
    with torch.enable_grad():
        emb = embedder(batch.ids).detach().requires_grad_(True)  # (S, T, d): a leaf of our own
        value = score(model, batch, emb)  # (1,)
        (grad,) = torch.autograd.grad(value.sum(), emb)
    return grad.float().cpu(), emb.detach().float().cpu(), float(value.detach()[0])


def per_token(frame: Frame, field: torch.Tensor) -> torch.Tensor:
    """``field`` ``(S, T, d)`` summed over each shown token's places: ``(N, d)``."""
    return torch.stack([sum((field[r, i] for r, i in s.places), torch.zeros(field.shape[-1])) for s in frame.shown])


def grad_norm(frame: Frame, grad: torch.Tensor) -> list[float]:
    """|gradient| of each shown token (its places' gradients summed first)."""
    return per_token(frame, grad).norm(dim=-1).tolist()


def grad_input(frame: Frame, grad: torch.Tensor, emb: torch.Tensor) -> list[float]:
    """gradient . embedding of each shown token (summed over its places)."""
    return per_token(frame, grad * emb).sum(-1).tolist()
