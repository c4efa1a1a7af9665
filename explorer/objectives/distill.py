"""DistilBERT-style knowledge distillation on one masked position.

The student learns from the true token (cross-entropy, CE) *and* from the teacher's whole
distribution softened by a temperature T (the "dark knowledge": how wrong answers rank).
Loss = alpha * CE(student, true token) + (1 - alpha) * T^2 * KL(teacher_T || student_T).
The T^2 factor (Hinton et al. 2015) keeps the soft term's gradients the same size as T changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from explorer.core.errors import ExplorerError, shorten
from explorer.objectives.base import _lists

__all__ = ["EXAMPLE_CONTEXT", "EXAMPLE_STUDENT", "EXAMPLE_TEACHER", "EXAMPLE_TOKENS", "EXAMPLE_TRUE",
    "DistillResult", "distill_loss", "example_loss", "softmax"]

# "Paris is the [MASK] of France." : teacher (large, confident) and student (small) logits.
EXAMPLE_CONTEXT = "Paris is the [MASK] of France."
EXAMPLE_TOKENS = ("capital", "heart", "center", "city", "pride", "jewel")
EXAMPLE_TEACHER = (6.0, 3.5, 3.0, 2.5, 1.0, 0.5)
EXAMPLE_STUDENT = (3.0, 2.8, 1.0, 2.9, 0.5, 0.2)
EXAMPLE_TRUE = "capital"


def softmax(logits: np.ndarray | Sequence[float], temperature: float = 1.0) -> np.ndarray:
    """(V,) softmax(logits / T), computed stably."""
    z = np.asarray(logits, dtype=float) / temperature
    e = np.exp(z - z.max())
    return e / e.sum()


@dataclass(frozen=True)
class DistillResult:
    """Every quantity of the loss for one position with V candidate tokens."""

    tokens: tuple[str, ...]  # (V,)
    true_token: str
    temperature: float
    alpha: float
    teacher_soft: tuple[float, ...]  # (V,) softmax(teacher / T)
    student_soft: tuple[float, ...]  # (V,) softmax(student / T)
    student_hard: tuple[float, ...]  # (V,) softmax(student), used by CE
    ce: float  # -log student_hard[true]
    kl: float  # KL(teacher_soft || student_soft), in nats
    kl_scaled: float  # T^2 * kl
    loss: float  # alpha * ce + (1 - alpha) * kl_scaled

    def to_dict(self) -> dict[str, object]:
        return _lists(asdict(self))

    def rows(self) -> list[dict[str, object]]:
        """One row per candidate token: softened teacher and student, and the student at T=1."""
        return [{"token": t, "teacher (T)": a, "student (T)": b, "student (T=1)": c}
                for t, a, b, c in zip(self.tokens, self.teacher_soft, self.student_soft, self.student_hard,
                                      strict=True)]


def distill_loss(tokens: tuple[str, ...], teacher_logits: tuple[float, ...], student_logits: tuple[float, ...],
                 true_token: str, temperature: float = 2.0, alpha: float = 0.5) -> DistillResult:
    """The distillation loss and its parts; raises ExplorerError on inconsistent inputs."""
    if not (len(tokens) == len(teacher_logits) == len(student_logits)) or not tokens:
        raise ExplorerError("tokens, teacher and student logits must be non-empty and of the same length")
    if true_token not in tokens:
        raise ExplorerError(f"the true token {shorten(true_token)!r} must be one of the candidates")
    if temperature <= 0 or not 0 <= alpha <= 1:
        raise ExplorerError("temperature must be > 0 and alpha in [0, 1]")
    t_soft, s_soft = softmax(teacher_logits, temperature), softmax(student_logits, temperature)
    s_hard = softmax(student_logits)
    ce = float(-np.log(s_hard[tokens.index(true_token)]))
    kl = float(np.sum(t_soft * (np.log(t_soft) - np.log(s_soft))))
    kl_scaled = temperature**2 * kl
    return DistillResult(tuple(tokens), true_token, float(temperature), float(alpha), tuple(t_soft.tolist()),
                         tuple(s_soft.tolist()), tuple(s_hard.tolist()), ce, kl, kl_scaled,
                         alpha * ce + (1 - alpha) * kl_scaled)


def example_loss(temperature: float, alpha: float, skill: float = 0.0) -> DistillResult:
    """The page's example: a student ``skill`` of the way from the example student to the teacher (0..1).

    >>> round(example_loss(2.0, 0.5, 1.0).kl, 12)  # a student equal to the teacher has nothing left to learn
    0.0
    """
    if not 0 <= skill <= 1:
        raise ExplorerError(f"student quality must be between 0 and 1 (got {skill}).")
    student = tuple(s + skill * (t - s) for s, t in zip(EXAMPLE_STUDENT, EXAMPLE_TEACHER, strict=True))
    return distill_loss(EXAMPLE_TOKENS, EXAMPLE_TEACHER, student, EXAMPLE_TRUE, temperature, alpha)
