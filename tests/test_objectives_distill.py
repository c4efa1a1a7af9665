"""explorer.objectives.distill: the toy distillation loss equals a hand computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.core.errors import ExplorerError
from explorer.objectives import distill as d


def _hand(t: float, alpha: float) -> float:
    teacher, student = np.array(d.EXAMPLE_TEACHER), np.array(d.EXAMPLE_STUDENT)
    soft_t = np.exp(teacher / t) / np.exp(teacher / t).sum()
    soft_s = np.exp(student / t) / np.exp(student / t).sum()
    hard_s = np.exp(student) / np.exp(student).sum()
    ce = -math.log(hard_s[d.EXAMPLE_TOKENS.index(d.EXAMPLE_TRUE)])
    kl = float((soft_t * np.log(soft_t / soft_s)).sum())
    return alpha * ce + (1 - alpha) * t * t * kl


@pytest.mark.parametrize("t, alpha", [(1.0, 0.5), (2.0, 0.5), (4.0, 0.1), (2.0, 1.0)])
def test_loss_equals_hand_computation(t: float, alpha: float) -> None:
    r = d.example_loss(t, alpha)
    assert math.isclose(r.loss, _hand(t, alpha), rel_tol=1e-9)
    assert math.isclose(sum(r.teacher_soft), 1) and math.isclose(sum(r.student_soft), 1)
    assert r.kl >= 0 and r.ce >= 0


def test_temperature_softens_the_teacher() -> None:
    cold, hot = d.example_loss(1.0, 0.5), d.example_loss(5.0, 0.5)
    assert max(hot.teacher_soft) < max(cold.teacher_soft)


def test_rows_and_skill() -> None:
    r = d.example_loss(2.0, 0.5, 1.0)
    assert r.kl == pytest.approx(0.0, abs=1e-12)
    assert [row["token"] for row in r.rows()] == list(d.EXAMPLE_TOKENS)
    with pytest.raises(ExplorerError):
        d.example_loss(2.0, 0.5, 1.5)
    with pytest.raises(ExplorerError):
        d.distill_loss(("a",), (1.0,), (1.0,), "b")
