"""The metrics of a task, one record each: what an example contributes, how the contributions add up, the interval,
whether higher is better and which task kinds it applies to. The report, its table and figure and the CLI's JSON
iterate over :data:`METRICS`; a new metric is one record here.

Every metric is a weighted mean of per-example amounts, finished by a function (``exp`` for perplexity): an example
gives ``(amount, weight)``, or None when it cannot be decided (a choice unscored), and is then left out.

>>> from explorer.evaluation.result import ExampleScores, ModelRun
>>> from explorer.evaluation.task import Example, Task
>>> task = Task("t", "choice", (Example(0, 1, "Sky:", ("blue", "red"), 0),), "written here")
>>> run = ModelRun("a", "decoder", "", "choice", (ExampleScores(0, (-1.0, -2.0), (True, False), (1, 1)),), 1)
>>> round(METRICS["brier_score"].measure(run, task).value, 4)  # softmax(-1, -2) = (0.731, 0.269) against (1, 0)
0.1447
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from explorer.evaluation.interval import bootstrap, wilson
from explorer.evaluation.result import ExampleScores, ModelRun
from explorer.evaluation.task import CHOICE, CLOZE, Task

__all__ = ["METRICS", "MAX_EXPONENT", "Measure", "Metric", "of_kind"]

MAX_EXPONENT = math.log(1.7e308)  # exp of more is past float range: such a perplexity is NaN, said as null
Amount = tuple[float, float] | None  # (amount, weight) of one example; None: not decided


@dataclass(frozen=True)
class Measure:
    """One model's value of one metric on the examples it decided (``value`` NaN when it decided none)."""

    metric: str
    value: float
    low: float | None  # the 95% interval, where the metric has one
    high: float | None
    examples: int  # examples decided
    right: int | None = None  # an accuracy's right answers


@dataclass(frozen=True)
class Metric:
    name: str  # lm-eval's name, the JSON key
    label: str
    kinds: tuple[str, ...]  # the task kinds it applies to
    higher_is_better: bool
    interval: str  # "wilson" (a share of right answers), "bootstrap" (a mean) or "none"
    amount: Callable[[ModelRun, Task, ExampleScores], Amount]
    finish: Callable[[float], float] = float  # of the weighted mean
    share: bool = False  # a value in [0, 1], drawn as a percentage

    def measure(self, run: ModelRun, task: Task) -> Measure:
        found = [a for s in run.examples if (a := self.amount(run, task, s)) is not None]
        weight = sum(w for _, w in found)
        if not found or weight <= 0:
            if self.interval == "wilson":
                return Measure(self.name, math.nan, *wilson(0, 0), 0, 0)
            return Measure(self.name, math.nan, None, None, 0)
        value = self.finish(sum(v * w for v, w in found) / weight)
        if self.interval == "wilson":
            right = round(sum(v for v, _ in found))
            return Measure(self.name, value, *wilson(right, len(found)), len(found), right)
        low, high = bootstrap([v for v, _ in found]) if self.interval == "bootstrap" else (None, None)
        return Measure(self.name, value, low, high, len(found))


def _hit(correct: bool | None) -> Amount:
    return None if correct is None else (float(correct), 1.0)


def _acc(run: ModelRun, task: Task, s: ExampleScores) -> Amount:
    return _hit(run.correct(s.index, task.examples[s.index].answer))


def _acc_norm(run: ModelRun, task: Task, s: ExampleScores) -> Amount:
    ex = task.examples[s.index]
    pick = run.norm_choice(s.index, ex.choices)
    return None if pick is None else (float(pick == ex.answer), 1.0)


def _answer_nll(run: ModelRun, task: Task, s: ExampleScores) -> Amount:
    """The right continuation's negative log-likelihood per token, weighted by its tokens."""
    answer = task.examples[s.index].answer
    lp, tokens = s.scores[answer], s.tokens[answer]
    return (-lp / tokens, float(tokens)) if math.isfinite(lp) and tokens else None


def _perplexity(nll: float) -> float:
    return math.exp(nll) if nll < MAX_EXPONENT else math.nan


def _brier(run: ModelRun, task: Task, s: ExampleScores) -> Amount:
    """lm-eval's ``brier_score``: the squared distance between the choices' softmax and the answer's one-hot."""
    if not s.scorable:
        return None
    lls = np.asarray(s.scores, dtype=np.float64)
    probs = np.exp(lls - lls.max())
    probs /= probs.sum()
    gold = np.eye(len(lls))[task.examples[s.index].answer]
    return float(((probs - gold) ** 2).sum()), 1.0


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("acc", "accuracy", (CHOICE, CLOZE), True, "wilson", _acc, share=True),
    Metric("acc_norm", "accuracy per character (acc_norm)", (CHOICE,), True, "wilson", _acc_norm, share=True),
    Metric("brier_score", "Brier score (0 best, 2 worst)", (CHOICE,), False, "bootstrap", _brier),
    Metric("perplexity", "perplexity of the answers", (CHOICE, CLOZE), False, "none", _answer_nll, _perplexity),
)}


def of_kind(kind: str) -> tuple[Metric, ...]:
    """The metrics of a task of ``kind``, in :data:`METRICS`' order."""
    return tuple(m for m in METRICS.values() if kind in m.kinds)
