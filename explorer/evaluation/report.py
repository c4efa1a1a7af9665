"""Several models' runs on one task, side by side: accuracy with its interval, and the examples where they differ.

A :class:`Report` is pure arithmetic on :class:`~explorer.evaluation.result.ModelRun`s (nothing runs here): each
model's metrics (:mod:`explorer.evaluation.metrics`: accuracy, length-normalised accuracy and the Brier score for
multiple choice, the perplexity of the right continuations), each accuracy with Wilson's 95% interval on the
examples that model scored; the paired
bootstrap interval of the difference between the first model and each other one, on the examples both scored;
and one row per example, those where the models disagree first.

>>> from explorer.evaluation.result import ExampleScores, ModelRun
>>> from explorer.evaluation.task import Example, Task
>>> sky, grass = Example(0, 1, "Sky:", ("blue", "red"), 0), Example(1, 2, "Grass:", ("red", "green"), 1)
>>> task = Task("t", "choice", (sky, grass), "written here")
>>> a = ModelRun("a", "decoder", "", "choice", (ExampleScores(0, (-1.0, -2.0), (True, False), (1, 1)),
...                                              ExampleScores(1, (-1.0, -2.0), (True, False), (1, 1))), 2)
>>> rep = build(task, [a])
>>> rep.summaries[0].acc.correct, [r.index for r in rep.rows]
(1, [0, 1])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from explorer.core.notices import Notice
from explorer.evaluation import metrics
from explorer.evaluation.interval import paired_difference, wilson
from explorer.evaluation.metrics import Measure
from explorer.evaluation.result import ModelRun
from explorer.evaluation.task import Task

__all__ = ["Accuracy", "Difference", "Pick", "Report", "Row", "Summary", "build"]



@dataclass(frozen=True)
class Accuracy:
    """Right answers out of the examples scored, with Wilson's 95% interval."""

    correct: int
    total: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.correct / self.total if self.total else 0.0

    @staticmethod
    def of(hits: Sequence[bool | None]) -> Accuracy:
        known = [h for h in hits if h is not None]
        right = sum(bool(h) for h in known)
        return Accuracy(right, len(known), *wilson(right, len(known)))


@dataclass(frozen=True)
class Summary:
    """One model's numbers on the task: every metric of its kind (:mod:`explorer.evaluation.metrics`)."""

    model: str
    measures: tuple[Measure, ...]
    scored: int
    total: int
    seconds: float

    def measure(self, name: str) -> Measure | None:
        return next((m for m in self.measures if m.metric == name), None)

    @property
    def acc(self) -> Accuracy:
        m = self.measure("acc")
        assert m is not None and m.low is not None and m.high is not None  # every kind has an accuracy
        return Accuracy(m.right or 0, m.examples, m.low, m.high)

    @property
    def acc_norm(self) -> Accuracy | None:  # multiple choice only
        m = self.measure("acc_norm")
        return None if m is None or m.low is None or m.high is None else Accuracy(m.right or 0, m.examples, m.low,
                                                                                   m.high)

    @property
    def perplexity(self) -> float:  # exp(-log-likelihood per token) of the right continuations
        m = self.measure("perplexity")
        return math.nan if m is None else m.value


@dataclass(frozen=True)
class Difference:
    """Accuracy of ``first`` minus ``other`` on the examples both scored, with a paired bootstrap 95% interval."""

    first: str
    other: str
    value: float
    low: float
    high: float
    examples: int


@dataclass(frozen=True)
class Pick:
    """One model's answer to one example."""

    model: str
    choice: int | None  # None: not scored (the run stopped before it)
    correct: bool | None
    scores: tuple[float, ...]


@dataclass(frozen=True)
class Row:
    """One example across the models."""

    index: int
    line: int
    context: str
    choices: tuple[str, ...]
    answer: int
    picks: tuple[Pick, ...]
    disagree: bool  # the models that scored it chose differently (or were not all right, or all wrong)


@dataclass(frozen=True)
class Report:
    task: str
    kind: str
    source: str
    runs: tuple[ModelRun, ...]
    summaries: tuple[Summary, ...]
    differences: tuple[Difference, ...]
    rows: tuple[Row, ...]  # disagreements first, then in file order
    notices: tuple[Notice, ...] = ()


def _summary(run: ModelRun, task: Task) -> Summary:
    measures = tuple(m.measure(run, task) for m in metrics.of_kind(task.kind))
    return Summary(run.model, measures, len(run.examples), run.total, run.seconds)


def _pick(run: ModelRun, index: int, answer: int) -> Pick:
    scored = run.scored(index)
    if scored is None:
        return Pick(run.model, None, None, ())
    return Pick(run.model, run.choice(index), run.correct(index, answer), scored.scores)


def _rows(task: Task, runs: Sequence[ModelRun]) -> tuple[Row, ...]:
    rows = []
    for ex in task.examples:
        picks = tuple(_pick(r, ex.index, ex.answer) for r in runs)
        seen = [p for p in picks if p.choice is not None]
        differ = len({p.choice for p in seen}) > 1 or len({p.correct for p in seen}) > 1
        rows.append(Row(ex.index, ex.line, ex.context, ex.choices, ex.answer, picks, differ))
    return tuple(sorted(rows, key=lambda r: (not r.disagree, r.index)))


def _differences(task: Task, runs: Sequence[ModelRun]) -> tuple[Difference, ...]:
    out = []
    for other in runs[1:]:
        both = min(len(runs[0].examples), len(other.examples))
        answers = [task.examples[i].answer for i in range(both)]
        pairs = [(runs[0].correct(i, answers[i]), other.correct(i, answers[i])) for i in range(both)]
        known = [(x, y) for x, y in pairs if x is not None and y is not None]  # an undecided example: left out
        a, b = [x for x, _ in known], [y for _, y in known]
        out.append(Difference(runs[0].model, other.model, *paired_difference(a, b), len(known)))
    return tuple(out)


def _said(run: ModelRun, task: Task) -> tuple[Notice, ...]:
    """What the scores themselves call for: choices that could not be scored, and best choices that tie."""
    out = []
    unscored = [task.examples[s.index].line for s in run.examples if not s.scorable]
    if unscored:
        out.append(Notice("missing", f"{run.model} could not score a choice of {len(unscored):,} example(s) (first "
                                     f"on line {unscored[0]}): its log-likelihood was not a finite number (-inf or "
                                     "past float range: the engine's log-probabilities). Those examples are left "
                                     "out of the accuracy, and their scores are null in JSON."))
    tied = [task.examples[s.index].line for s in run.examples if s.tied and _different(s.scores, task.examples[
        s.index].choices)]
    if tied:
        out.append(Notice("info", f"{run.model}'s best choices tie exactly on {len(tied):,} of {len(run.examples):,}"
                                  f" example(s) (first on line {tied[0]}): the first of them is taken, as lm-eval "
                                  "does (numpy.argmax), so a tie counts as right only when the answer comes first. "
                                  "Every choice tied says the model told them apart not at all."))
    return tuple(out)


def _different(scores: tuple[float, ...], choices: tuple[str, ...]) -> bool:
    """The best-scored choices are different texts (identical ones tie by nature: the task's own notice says so)."""
    top = max(scores)
    return len({c for c, v in zip(choices, scores, strict=False) if v == top}) > 1


def build(task: Task, runs: Sequence[ModelRun]) -> Report:
    """The report of ``runs`` (each a model's run on ``task``, possibly stopped early) on ``task``."""
    notices = tuple(n for r in runs for n in (*r.notices, *_said(r, task)))
    return Report(task.name, task.kind, task.source, tuple(runs), tuple(_summary(r, task) for r in runs),
                  _differences(task, runs), _rows(task, runs), task.notices + notices)
