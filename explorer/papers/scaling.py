"""Scaling laws: Kaplan et al.'s L(N) and L(D), Chinchilla's compute-optimal split, and where the catalog sits.

Constants, as the papers give them:

- Kaplan et al. 2020, *Scaling Laws for Neural Language Models*, Eq. 1.1 and 1.2 (Table 5): test loss in
  nats per token on WebText2, for decoder-only language models,
  L(N) = (N_c / N)^α_N with α_N ≈ 0.076, N_c ≈ 8.8e13 non-embedding parameters (data not limiting), and
  L(D) = (D_c / D)^α_D with α_D ≈ 0.095, D_c ≈ 5.4e13 tokens (model large, early-stopped).
  The constants depend on the tokenizer and the data (the paper says so); the curves show the *shape*.
- Hoffmann et al. 2022, *Training Compute-Optimal Large Language Models* (Chinchilla): for a compute budget C
  the optimal N and D both grow as about C^0.5 (Table 2, a ≈ b ≈ 0.5), which works out at about 20 tokens
  per parameter (Chinchilla: 70B parameters on 1.4T tokens). With C ≈ 6·N·D (Kaplan et al., Sec. 2.1),
  N_opt = sqrt(C / (6·20)) and D_opt = 20·N_opt.

The catalog's models are placed with their published parameter count (all parameters: Kaplan's N leaves
out embeddings, so small models sit a little to the right of where Kaplan would put them) and the tokens
their budget records (:mod:`explorer.papers.budgets`). A predicted loss is what the fit says, not a measurement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from explorer.architecture import catalog
from explorer.papers import budgets

__all__ = ["ALPHA_D", "ALPHA_N", "D_C", "N_C", "TOKENS_PER_PARAM", "Placement", "chinchilla_optimal",
           "geomspace", "loss_d", "loss_n", "placements"]

N_C = 8.8e13  # Kaplan et al. 2020, Eq. 1.1: non-embedding parameters
ALPHA_N = 0.076  # Eq. 1.1
D_C = 5.4e13  # Kaplan et al. 2020, Eq. 1.2: tokens
ALPHA_D = 0.095  # Eq. 1.2
TOKENS_PER_PARAM = 20  # Hoffmann et al. 2022: compute-optimal D/N (70B params on 1.4T tokens)
FLOPS_PER_PARAM_TOKEN = 6  # C ≈ 6 N D (Kaplan et al. 2020, Sec. 2.1)


def loss_n(params: float) -> float:
    """Kaplan's L(N) in nats per token (enough data, trained to convergence)."""
    return (N_C / params) ** ALPHA_N


def loss_d(tokens: float) -> float:
    """Kaplan's L(D) in nats per token (a large model, early-stopped)."""
    return (D_C / tokens) ** ALPHA_D


def chinchilla_optimal(compute: float) -> tuple[float, float]:
    """(N_opt, D_opt) for a budget of ``compute`` FLOPs: D = 20 N and C = 6 N D."""
    params = math.sqrt(compute / (FLOPS_PER_PARAM_TOKEN * TOKENS_PER_PARAM))
    return params, TOKENS_PER_PARAM * params


def geomspace(low: float, high: float, count: int = 60) -> list[float]:
    """``count`` points evenly spaced on a log axis from ``low`` to ``high`` (both > 0)."""
    step = (math.log10(high) - math.log10(low)) / (count - 1)
    return [10 ** (math.log10(low) + i * step) for i in range(count)]


@dataclass(frozen=True)
class Placement:
    """One catalog model at its (parameters, tokens), with what the fits predict there."""

    key: str
    name: str
    params: int
    tokens: float
    tokens_source: str
    loss_n: float
    loss_d: float
    tokens_per_param: float
    compute: float  # 6 N D, for the iso-compute comparison


def placements() -> list[Placement]:
    """Every variant whose budget gives a token count and whose paper gives a parameter count."""
    out = []
    for b in budgets.budgets():
        variant = catalog.get_variant(b.key)
        params = variant.published_params
        if b.tokens is None or params is None:
            continue
        out.append(Placement(b.key, variant.name, params, b.tokens, b.tokens_source or "", loss_n(params),
                             loss_d(b.tokens), b.tokens / params, FLOPS_PER_PARAM_TOKEN * params * b.tokens))
    return out
