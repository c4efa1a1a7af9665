"""What an intervention is measured by, read from the logits at the answer's position.

Three metrics, as in the activation-patching literature (Wang et al. 2023; Zhang & Nanda 2024):

- ``logit-diff`` (default): the target's logit minus the foil's, the model's preference between two answers;
- ``prob``: the target's probability;
- ``kl``: the KL divergence from the clean run's next-token distribution (0 when it is the clean distribution).

:func:`normalise` puts a patched run on one scale: 0 is the corrupted run, 1 the clean one.

>>> import torch
>>> logits = torch.tensor([[2.0, 0.0, -1.0], [0.0, 0.0, 0.0]])  # (B, V)
>>> values(logits, "logit-diff", target=0, foil=1).tolist()
[2.0, 0.0]
>>> round(float(values(logits, "prob", target=0)[1]), 4)
0.3333
>>> normalise(1.0, clean=2.0, corrupt=0.0, metric="logit-diff"), normalise(0.5, clean=0.0, corrupt=1.0, metric="kl")
(0.5, 0.5)
"""

from __future__ import annotations

import math

import torch

from explorer.core.errors import ExplorerError

__all__ = ["LABELS", "METRICS", "check_metric", "distance", "normalise", "values"]

METRICS = ("logit-diff", "prob", "kl")
LABELS = {"logit-diff": "target − foil logit", "prob": "target probability", "kl": "KL from the clean run"}
MIN_GAP = 1e-6  # clean and corrupted metrics closer than this have no scale to normalise on


def check_metric(metric: str, foil: object) -> str:
    """``metric`` when known and complete (logit-diff needs a foil), else an ExplorerError."""
    if metric not in METRICS:
        raise ExplorerError(f"Unknown metric {metric!r}: use one of {', '.join(METRICS)}.")
    if metric == "logit-diff" and not (isinstance(foil, str) and foil.strip()):
        raise ExplorerError("The logit-difference metric compares the target with a foil: type the foil (the "
                            "answer the corrupted prompt leads to, e.g. Rome), or pick the prob or kl metric.")
    return metric


def values(logits: torch.Tensor, metric: str, target: int, foil: int | None = None,
           clean: torch.Tensor | None = None) -> torch.Tensor:
    """The metric of every row of ``logits`` (B, V) -> (B,), in float32; ``clean`` (V,) is the clean run's logits,
    which ``kl`` measures from."""
    x = logits.float()
    if metric == "logit-diff":
        if foil is None:
            raise ExplorerError("The logit-difference metric needs a foil token.")
        return x[:, target] - x[:, foil]
    if metric == "prob":
        return torch.softmax(x, dim=-1)[:, target]
    if metric == "kl":
        if clean is None:
            raise ExplorerError("The KL metric measures from the clean run: its logits are needed.")
        return distance(clean.float()[None].expand_as(x), x)
    raise ExplorerError(f"Unknown metric {metric!r}: use one of {', '.join(METRICS)}.")


def distance(reference: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """KL(reference || logits) per row: (B, V), (B, V) -> (B,), in nats, never negative."""
    p_log = torch.log_softmax(reference.float(), dim=-1)
    q_log = torch.log_softmax(logits.float(), dim=-1)
    return (p_log.exp() * (p_log - q_log)).sum(dim=-1).clamp_min(0.0)


def normalise(value: float, clean: float, corrupt: float, metric: str) -> float:
    """``value`` on the scale 0 = corrupted run, 1 = clean run (``kl``: its corrupted distance is 0, the clean
    run's 1); NaN stays NaN (a cell not computed)."""
    if math.isnan(value):
        return value
    if metric == "kl":  # a distance from the clean run: the clean run is 0, the corrupted one the largest
        return (corrupt - value) / corrupt if corrupt > MIN_GAP else float("nan")
    gap = clean - corrupt
    return (value - corrupt) / gap if abs(gap) > MIN_GAP else float("nan")
