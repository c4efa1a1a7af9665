"""What the lens reports of a distribution over the vocabulary: top-k, a token's rank, entropy, KL divergence.

All in nats, from log-probabilities ``(..., V)`` in float32 (a bfloat16 model's logits are cast first: a sum
over 262,144 probabilities in bfloat16 loses the small ones). ``kl(p, q)`` is ``KL(p || q)``: the lens reports
``KL(final || layer)``, what the tuned lens is trained to minimise (Belrose et al. 2023).

>>> import torch
>>> lp = torch.log(torch.tensor([[0.5, 0.25, 0.25]]))
>>> rank(lp, 1).tolist(), [round(v, 4) for v in entropy(lp).tolist()]
([2], [1.0397])
>>> kl(lp, lp).tolist()
[0.0]
"""

from __future__ import annotations

import torch

__all__ = ["entropy", "kl", "rank", "top_k"]


def top_k(logp: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids ``(..., k)``, probabilities ``(..., k)``), most likely first."""
    values, ids = logp.topk(min(k, logp.shape[-1]), dim=-1)
    return ids, values.exp()


def rank(logp: torch.Tensor, token: int) -> torch.Tensor:
    """1 + how many tokens are more likely than ``token``: ``(...,)`` (1: the top prediction)."""
    mine = logp[..., token : token + 1]
    return (logp > mine).sum(-1) + 1


def entropy(logp: torch.Tensor) -> torch.Tensor:
    """``-sum p log p`` ``(...,)`` (a token with probability 0 adds nothing)."""
    return -(logp.exp() * logp.clamp(min=-1e30)).nan_to_num(0.0).sum(-1)


def kl(reference: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """``KL(reference || other)`` ``(...,)`` from log-probabilities; never below 0 (rounding)."""
    p = reference.exp()
    return (p * (reference - other)).nan_to_num(0.0).sum(-1).clamp(min=0.0)
