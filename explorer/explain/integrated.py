"""Integrated gradients (Sundararajan et al. 2017) with captum, over the input embedding layer, steps in batches.

``IG_i = (e_i - e'_i) . integral over a in [0, 1] of grad f(e' + a (e - e'))_i da``: the path runs from the
baseline's embeddings ``e'`` (every shown token replaced by padding; special tokens and the target kept) to the
text's ``e``, and the integral is captum's Gauss-Legendre quadrature at ``steps`` points. captum's
``LayerIntegratedGradients`` hooks our :class:`~explorer.explain.scorer.Embedder` (never the shared model) and
runs the steps ``per_batch`` at a time (``internal_batch_size``, rows of every step's frame together).

Completeness: the scores sum to ``f(e) - f(e')``, up to the quadrature's error; :func:`integrated` returns both
ends, scored by the same forward, and the relative error is reported beside the figure.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from explorer.explain.frame import Frame
from explorer.explain.gradients import per_token
from explorer.explain.scorer import Embedder, batch_of, score, values
from explorer.runtime.offload import input_device

__all__ = ["Integrated", "completeness", "integrated"]


@dataclass(frozen=True)
class Integrated:
    scores: list[float]  # one per shown token
    output: float  # f at the text
    baseline_output: float  # f at the baseline

    @property
    def completeness(self) -> float:
        return completeness(sum(self.scores), self.output, self.baseline_output)


def completeness(total: float, output: float, baseline: float) -> float:
    """The relative gap between the scores' sum and ``output - baseline`` (0: complete).

    >>> completeness(0.99, 3.0, 2.0)
    0.01
    """
    gap = output - baseline
    return round(abs(total - gap) / max(abs(gap), 1e-12), 12)


def integrated(model: torch.nn.Module, frame: Frame, steps: int, per_batch: int) -> Integrated:
    """Integrated gradients of every shown token, ``per_batch`` steps (of all the frame's rows) at a time."""
    # heavy: only attributions import captum, which ships no type information
    from captum.attr import LayerIntegratedGradients  # type: ignore[import-untyped]

    embedder = Embedder(model)
    template = batch_of([frame], input_device(model))
    rows, width = template.ids.shape  # (S, T)

    def forward(ids: torch.Tensor) -> torch.Tensor:  # (B, S, T) -> (B,)
        copies = ids.shape[0]
        return score(model, template.tiled(copies), embedder(ids.reshape(copies * rows, width)))

    base = batch_of([replace(frame, rows=frame.baseline_rows())], template.ids.device).ids
    with torch.enable_grad():
        attributions = LayerIntegratedGradients(forward, embedder).attribute(
            template.ids.reshape(1, rows, width), baselines=base.reshape(1, rows, width), n_steps=int(steps),
            method="gausslegendre", internal_batch_size=max(1, int(per_batch)) * rows)  # (S, T, d)
    scores = per_token(frame, attributions.detach().float().cpu()).sum(-1).tolist()
    ends = values(model, [frame, replace(frame, rows=frame.baseline_rows())], embedder)
    return Integrated(scores, float(ends[0]), float(ends[1]))
