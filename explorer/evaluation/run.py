"""A model's run on a task: every example checked before the first is scored, progress as it goes, and what was
scored kept when the request's budget runs out.

The examples go to the scorer a few at a time (:data:`CHUNK` local ones; as many served pairs as one parallel
call sends), so a progress callback hears after each chunk and the request's token
(:mod:`explorer.runtime.cancel`) is checked between them. When the time or memory budget ends after some
examples, the run stops there: the :class:`~explorer.evaluation.result.ModelRun` holds the examples scored, and a
"stopped" notice says how many of how many and how to get the rest (the command line has no budget). A closed
page stops at once (nobody waits for the rest); a budget that ends before anything was scored is raised.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice
from explorer.evaluation.result import ExampleScores, ModelRun
from explorer.evaluation.score import Group, Score, Scorer
from explorer.evaluation.task import Task
from explorer.runtime import cancel
from explorer.serving.client import ServedError
from explorer.serving.scoring import MAX_PAIRS

__all__ = ["CHUNK", "Progress", "score_task"]

CHUNK = 8  # local examples between progress reports and stop checks: one batch of contexts (a few seconds)
Progress = Callable[[float, str], None]


def _lines(task: Task, start: int, stop: int) -> str:
    first, last = task.examples[start].line, task.examples[stop - 1].line
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _chunk(scorer: Scorer, task: Task) -> int:
    if scorer.family != "served":
        return CHUNK
    widest = max(len(ex.choices) for ex in task.examples)
    return max(1, MAX_PAIRS // widest)  # one parallel call's worth of pairs


def _checked(scorer: Scorer, task: Task, groups: Sequence[Group]) -> None:
    """Every group the scorer would refuse, said before any is scored (with the line it came from)."""
    for ex, group in zip(task.examples, groups, strict=True):
        try:
            scorer.check([group])
        except ServedError:
            raise
        except ExplorerError as err:
            raise ExplorerError(f"Line {ex.line} of {task.source}: {err}") from None


def _scores(index: int, scores: list[Score]) -> ExampleScores:
    """An example's scores; a log-likelihood that is not a finite number (-inf, a sum past float range, NaN) is NaN:
    that choice could not be scored (:mod:`~explorer.evaluation.result`)."""
    return ExampleScores(index, tuple(s.logprob if math.isfinite(s.logprob) else math.nan for s in scores),
                         tuple(s.greedy for s in scores), tuple(s.tokens for s in scores))


def _stopped(model: str, done: int, total: int, reason: str) -> Notice:
    return Notice("stopped", f"{model} scored {done:,} of {total:,} examples before this request's "
                             f"{'memory' if reason == 'memory' else 'time'} budget ran out: the results below are "
                             "on those. The command line scores them all (python -m explorer evaluate --model "
                             f"... --task FILE).")


def score_task(scorer: Scorer, task: Task, progress: Progress | None = None, chunk: int | None = None,
               first: int = 0, last: int | None = None) -> ModelRun:
    """``scorer``'s run on the examples ``first`` to ``last`` of ``task`` (all by default; fewer when the request's
    budget ends first). A run from the first example checks every example before it scores one."""
    groups = [(ex.context, ex.continuations()) for ex in task.examples]
    if first == 0:
        _checked(scorer, task, groups)
    size, total = chunk or _chunk(scorer, task), len(groups)
    end = total if last is None else min(total, last)
    done: list[ExampleScores] = []
    notices: list[Notice] = []
    began = time.perf_counter()
    for start in range(first, end, size):
        stop = min(end, start + size)
        try:
            cancel.check()
            scored = scorer.score(groups[start:stop])
        except cancel.RequestStopped as err:
            if err.reason == "gone" or not done:
                raise
            notices.append(_stopped(scorer.key, first + len(done), total, err.reason))
            break
        except ServedError:
            raise
        except ExplorerError as err:
            raise ExplorerError(f"{_lines(task, start, stop).capitalize()} of {task.source}: {err}") from None
        done.extend(_scores(i, s) for i, s in zip(range(start, stop), scored, strict=True))
        if progress is not None:
            count = first + len(done)
            progress(count / total, f"{scorer.key}: {count:,} of {total:,} examples scored")
    where = scorer.where()
    return ModelRun(scorer.key, scorer.family, scorer.method, task.kind, tuple(done), total,
                    time.perf_counter() - began, scorer.untrained, tuple(notices), where["device"],
                    where["device_name"], where["dtype"])


def merge(parts: Sequence[ModelRun]) -> ModelRun:
    """Consecutive parts of one model's run (each a range of the task's examples, in order) as one run."""
    head = parts[0]
    examples = tuple(e for p in parts for e in p.examples)
    return replace(head, examples=examples, seconds=sum(p.seconds for p in parts),
                   notices=tuple(n for p in parts for n in p.notices))


def score_in_parts(part: Callable[[int, int], ModelRun], total: int, size: int, budget: float,
                   progress: Progress | None = None) -> ModelRun:
    """A run made of parts of ``size`` examples (``part(first, last)``, each its own request, each cached by the
    page), reporting after each one, until every example is scored, a part stops early (its own budget ran out),
    or the parts' time together passes ``budget`` seconds: the run keeps what was scored and says what was cut."""
    parts: list[ModelRun] = []
    for first in range(0, total, size):
        parts.append(part(first, min(total, first + size)))
        done = first + len(parts[-1].examples)
        if progress is not None:
            progress(done / total, f"{parts[-1].model}: {done:,} of {total:,} examples scored")
        if parts[-1].stopped:
            break
        if done < total and sum(p.seconds for p in parts) > budget:
            parts.append(replace(parts[-1], examples=(), seconds=0.0,
                                 notices=(_stopped(parts[-1].model, done, total, "time"),)))
            break
    return merge(parts)
