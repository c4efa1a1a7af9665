"""One step of the forward pass: its name, kind, tensor and a few statistics, and how far it is from the model's own.

``kind`` is a small vocabulary (:data:`KINDS`) so two variants' steps line up: BERT's post-LN "norm" beside
Gemma's, learned "position" embeddings beside a RoPE rotation. ``axes`` names each dimension of the tensor
("token" or "query" is the token axis, "key" the attended one, "head"/"kv-head" the heads, "feature" the rest).

>>> import torch
>>> s = summary(torch.tensor([[3.0, 4.0], [0.0, 0.0]]), ("token", "feature"))
>>> s.mean, s.token_norms
(1.75, (5.0, 0.0))
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

__all__ = ["KINDS", "Step", "Summary", "summary"]

KINDS: tuple[str, ...] = (
    "embed", "position", "norm", "q", "k", "v", "scores", "scale", "mask", "softmax", "mix", "concat", "out-proj",
    "residual", "mlp-up", "mlp-gate", "mlp-act", "mlp-gated", "mlp-down", "final-norm", "head", "logits", "probs",
)
TOKEN_AXES = ("token", "query")
DIGITS = 6  # statistics in JSON: float32's precision is ~7 digits


@dataclass(frozen=True)
class Summary:
    mean: float
    std: float
    token_norms: tuple[float, ...]  # the L2 norm of each token's slice (all axes but the token axis)


def summary(tensor: torch.Tensor, axes: tuple[str, ...]) -> Summary:
    """Mean, standard deviation and per-token norms of ``tensor`` (non-finite entries, a mask's -inf, left out)."""
    x = tensor.detach().float()
    if not bool(torch.isfinite(x).all()):
        x = torch.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)
    if x.numel() == 0:
        return Summary(0.0, 0.0, ())
    std, mean = torch.std_mean(x, unbiased=False) if x.numel() > 1 else (torch.zeros(()), x.flatten()[0])
    token = next((axes.index(a) for a in TOKEN_AXES if a in axes), None)
    if token is None or x.dim() == 0:
        return Summary(float(mean), float(std), ())
    norms = x.movedim(token, 0).reshape(x.shape[token], -1).norm(dim=1)
    return Summary(float(mean), float(std), tuple(norms.tolist()))


@dataclass(frozen=True)
class Step:
    """One operation recomputed from the model's weights, checked against the model's own intermediate.

    ``checked_against``: the module (``path`` or ``path (input)``) whose hooked value this step's tensor, or a later
    one's, was compared with; ``exact`` is False when the model has no module at this very point and the nearest
    later checked point vouches for it. ``max_abs_error`` is None where nothing could be compared.
    """

    index: int
    name: str
    kind: str
    stack: str  # "encoder" or "decoder"
    layer: int | None  # None: embeddings, final norm and head
    axes: tuple[str, ...]
    shape: tuple[int, ...]
    mean: float
    std: float
    token_norms: tuple[float, ...]
    max_abs_error: float | None
    checked_against: str | None
    exact: bool
    note: str = ""
    statistics: tuple[tuple[str, tuple[float, ...]], ...] = ()  # a norm's per-token mean and variance, or RMS
    tensor: torch.Tensor | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, object]:
        """The CLI's JSON (the tensor and the per-token lists left out)."""
        error = None if self.max_abs_error is None else float(f"{self.max_abs_error:.3g}")
        return {"name": self.name, "layer": self.layer, "kind": self.kind, "stack": self.stack,
                "shape": list(self.shape), "mean": round(self.mean, DIGITS), "std": round(self.std, DIGITS),
                "max_abs_error": error, "checked_against": self.checked_against, "exact": self.exact,
                "note": self.note}
