"""One model's scores on a task, example by example, and what they decide.

A :class:`ModelRun` holds the scores of every choice of every example the model got to (all of them, or a prefix
when a request's budget ran out: ``complete`` says which, its notices say why). What the scores decide is one
rule for the page, the CLI and the tests (lm-eval's): the choice with the highest log-likelihood
(:meth:`ModelRun.choice`; the first of equal ones, as ``numpy.argmax`` in lm-eval's ``process_results``, for a
local model and a served one alike), or per character of the choice (:meth:`ModelRun.norm_choice`, ``acc_norm``); a
cloze example is right when its continuation was the greedy one. A choice whose log-likelihood is not a finite
number (an engine's log-probabilities summed past float range, -inf, NaN) could not be scored: its score is NaN
here and null in JSON, and its example has no choice and is neither right nor wrong (left out of the accuracy).

>>> run = ModelRun("m", "decoder", "", "choice", (ExampleScores(0, (-4.0, -3.0), (None, None), (1, 3)),), 1)
>>> run.choice(0), run.norm_choice(0, ("a", "bcd")), run.examples[0].best
(1, 1, -3.0)
>>> unscored = ExampleScores(0, (-1.0, float("nan")), (None, None), (1, 1))  # the engine could not score one
>>> ModelRun("m", "served", "", "choice", (unscored,), 1).choice(0) is None
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from explorer.core.notices import Notice, texts
from explorer.evaluation.task import CLOZE, Task

__all__ = ["ExampleScores", "ModelRun"]


@dataclass(frozen=True)
class ExampleScores:
    """One model on one example: a log-likelihood, a greedy match and a token count per choice."""

    index: int  # the example's index in its task
    scores: tuple[float, ...]
    greedy: tuple[bool | None, ...]  # None: the model could not say (a served multiple-choice request)
    tokens: tuple[int, ...]

    @property
    def scorable(self) -> bool:
        """Every choice has a finite score (else the example cannot be decided)."""
        return all(math.isfinite(v) for v in self.scores)

    @property
    def best(self) -> float:
        """The highest finite score (NaN when none is)."""
        return max((v for v in self.scores if math.isfinite(v)), default=math.nan)

    @property
    def tied(self) -> bool:
        """Two or more choices share the best score exactly (the first of them is taken)."""
        return self.scorable and len(self.scores) > 1 and self.scores.count(max(self.scores)) > 1


@dataclass(frozen=True)
class ModelRun:
    """A model's scores on the examples of one task it got to, in task order."""

    model: str
    family: str  # "decoder", "masked", "encoder-decoder" or "served"
    method: str  # how a continuation is scored, in words
    kind: str  # the task's kind (choice or cloze)
    examples: tuple[ExampleScores, ...]
    total: int  # examples in the task
    seconds: float = 0.0
    untrained: bool = False
    notices: tuple[Notice, ...] = ()
    device: str = "cpu"
    device_name: str = "cpu"
    dtype: str = "float32"

    @property
    def complete(self) -> bool:
        return len(self.examples) == self.total

    @property
    def stopped(self) -> bool:
        """Whether a request's budget stopped the run (or a part of it) before its planned end."""
        return any(n.kind == "stopped" for n in self.notices)

    def scored(self, index: int) -> ExampleScores | None:
        """The scores of the example at ``index``, or None when the run stopped before it."""
        return self.examples[index] if index < len(self.examples) else None

    def choice(self, index: int) -> int | None:
        """The choice with the highest summed log-likelihood (the first of equal ones; None: a choice unscored)."""
        ex = self.examples[index]
        return int(np.argmax(ex.scores)) if ex.scorable else None

    def norm_choice(self, index: int, choices: tuple[str, ...]) -> int | None:
        """The highest log-likelihood per character of the choice (lm-eval's ``acc_norm``; None: a choice unscored)."""
        ex = self.examples[index]
        lengths = np.array([max(1, len(c)) for c in choices], dtype=np.float64)
        return int(np.argmax(np.asarray(ex.scores) / lengths)) if ex.scorable else None

    def correct(self, index: int, answer: int) -> bool | None:
        """Right or wrong on the example at ``index`` (cloze: the greedy match; None when not known)."""
        if not self.examples[index].scorable:
            return None
        if self.kind == CLOZE:
            return self.examples[index].greedy[0]
        return self.choice(index) == answer

    def to_dict(self, task: Task) -> dict[str, object]:
        """JSON-able: the run's facts and, per example, the choice, right or wrong, and every choice's score."""
        rows = [{"index": s.index, "line": task.examples[s.index].line, "choice": self.choice(s.index),
                 "correct": self.correct(s.index, task.examples[s.index].answer),
                 "scores": [round(v, 6) if math.isfinite(v) else None for v in s.scores], "tokens": list(s.tokens)}
                for s in self.examples]
        return {"model": self.model, "family": self.family, "method": self.method, "kind": self.kind,
                "scored": len(self.examples), "total": self.total, "complete": self.complete,
                "seconds": round(self.seconds, 3), "untrained": self.untrained, "notices": texts(self.notices),
                "device": self.device, "device_name": self.device_name, "dtype": self.dtype, "examples": rows}
