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

- Hoffmann et al. 2022, Approach 3 (fitting a parametric loss function): L(N, D) = E + A / N^α + B / D^β with
  E = 1.69, A = 406.4, B = 410.7, α = 0.34, β = 0.28, in nats per token on MassiveText, the values the body of
  the paper prints. They were read here only in copies that quote them (the same five values in each); no copy of
  the paper itself that shows which equation holds them could be read, so no equation number is cited.
  Besiroglu et al. 2024 (*Chinchilla Scaling: A replication attempt*, arXiv:2404.10102) refit Approach 3 on data
  read off the paper's plots and report that these printed values are rounded in a way that substantially biases
  the law's predictions (the TeX source holds more digits), and that the original fit's optimizer stopped before
  converging: the curve drawn with them is the paper's printed law, a shape rather than a precise prediction.

Which N each fit takes: Kaplan's N counts **non-embedding** parameters (the paper's own definition: token and
position embeddings left out), Chinchilla's N counts **all** parameters (the difference between the two counts
explains much of the gap between their exponents: Pearce & Song 2024). So each catalog model is placed on L(N) by
its non-embedding count (:func:`non_embedding_params`, counted on the model built from its config: Gemma 3 270M
has 100M of them beside 170M of embeddings, 2.7x fewer than its total), and on Chinchilla's fit and the (N, D)
plane by its published total, with the tokens its budget records (:mod:`explorer.architecture.budgets`). A predicted
loss is what the fit says, not a measurement. ALBERT's layers share one set of weights: both counts take that set
once (they count weights), while each token runs it once per layer, so ALBERT's 6·N·D ``compute`` is a lower bound.
A variant whose budget is not its checkpoint's (the catalog's ALBERT v2 checkpoints trained 24x to 80x the steps
of the paper's setup, their tokens unpublished) is left out, and :func:`unplaced` says why.

>>> round(loss_chinchilla(70e9, 1.4e12), 3)  # Chinchilla itself
1.937
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from explorer.architecture import budgets, catalog

__all__ = ["ALPHA_D", "ALPHA_N", "CHINCHILLA_FIT", "D_C", "N_C", "TOKENS_PER_PARAM", "ScalingPoint",
           "chinchilla_optimal", "geomspace", "loss_chinchilla", "loss_d", "loss_n", "non_embedding_params",
           "placements", "unplaced"]

N_C = 8.8e13  # Kaplan et al. 2020, Eq. 1.1: non-embedding parameters
ALPHA_N = 0.076  # Eq. 1.1
D_C = 5.4e13  # Kaplan et al. 2020, Eq. 1.2: tokens
ALPHA_D = 0.095  # Eq. 1.2
TOKENS_PER_PARAM = 20  # Hoffmann et al. 2022: compute-optimal D/N (70B params on 1.4T tokens)
FLOPS_PER_PARAM_TOKEN = 6  # C ≈ 6 N D (Kaplan et al. 2020, Sec. 2.1)
# Hoffmann et al. 2022, Approach 3, as the paper's body prints them (rounded: Besiroglu et al. 2024 found the rounding
# biases the fit's predictions; see the module docstring)
CHINCHILLA_FIT = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}


def loss_chinchilla(params: float, tokens: float) -> float:
    """Chinchilla's parametric L(N, D) in nats per token (N: all parameters)."""
    f = CHINCHILLA_FIT
    return f["E"] + f["A"] / params ** f["alpha"] + f["B"] / tokens ** f["beta"]


@lru_cache(maxsize=64)
def non_embedding_params(key: str) -> int:
    """Parameters of ``key`` outside its embedding tables (Kaplan's N), counted on the model built from its
    config on the meta device (no memory): every distinct weight that is not an embedding table."""
    from torch import nn

    from explorer.architecture import build

    model = build.build(key)
    tables = {id(p) for m in model.modules() if isinstance(m, nn.Embedding) for p in m.parameters(recurse=False)}
    return sum(p.numel() for p in model.parameters() if id(p) not in tables)  # a tied output layer is a table too


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
class ScalingPoint:
    """One catalog model at its (parameters, tokens), with what the fits predict there."""

    key: str
    name: str
    params: int  # published, all parameters (Chinchilla's N)
    non_embedding: int  # Kaplan's N
    tokens: float
    tokens_source: str
    loss_n: float
    loss_d: float
    tokens_per_param: float
    compute: float  # 6 N D, for the iso-compute comparison
    loss_chinchilla: float = 0.0  # Chinchilla's L(N, D) at (all parameters, tokens)


def placements() -> list[ScalingPoint]:
    """Every variant whose budget gives a token count and whose paper gives a parameter count."""
    out = []
    for b in budgets.budgets():
        variant = catalog.get_variant(b.key)
        params = variant.published_params
        if b.tokens is None or params is None or not b.describes_checkpoint:
            continue
        inner = non_embedding_params(b.key)
        out.append(ScalingPoint(b.key, variant.name, params, inner, b.tokens, b.tokens_source or "", loss_n(inner),
                             loss_d(b.tokens), b.tokens / params, FLOPS_PER_PARAM_TOKEN * params * b.tokens,
                             loss_chinchilla(params, b.tokens)))
    return out


def unplaced() -> dict[str, str]:
    """Variants with a recorded token count that the plots leave out, and why: their budget is a shorter setup of
    their paper than the checkpoint the catalog builds (ALBERT's v2, trained 24x to 80x the steps)."""
    return {b.key: f"its checkpoint was trained {b.checkpoint_ratio:.0f}x the {b.steps:,} steps of the recorded "
                   "setup, and its own token count is not published"
            for b in budgets.budgets() if b.tokens is not None and b.checkpoint_ratio is not None}
