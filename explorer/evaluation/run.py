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

import time
from collections.abc import Callable, Sequence

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice
from explorer.evaluation.result import ExampleScores, ModelRun
from explorer.evaluation.score import Group, Score, Scorer
from explorer.evaluation.task import Task
from explorer.runtime import cancel
from explorer.serving.client import ServedError
from explorer.serving.scoring import MAX_PAIRS

__all__ = ["CHUNK", "Progress", "score_task"]

CHUNK = 4  # local examples between progress reports and stop checks (a few seconds of Gemma on 2 cores)
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
    return ExampleScores(index, tuple(s.logprob for s in scores), tuple(s.greedy for s in scores),
                         tuple(s.tokens for s in scores))


def _stopped(scorer: Scorer, done: int, total: int, err: cancel.RequestStopped) -> Notice:
    return Notice("stopped", f"{scorer.key} scored {done:,} of {total:,} examples before this request's "
                             f"{'time' if err.reason == 'time' else 'memory'} budget ran out: the results below are "
                             "on those. The command line scores them all (python -m explorer evaluate --model "
                             f"... --task FILE).")


def score_task(scorer: Scorer, task: Task, progress: Progress | None = None, chunk: int | None = None) -> ModelRun:
    """``scorer``'s run on every example of ``task`` (a prefix of them when the request's budget ends first)."""
    groups = [(ex.context, ex.continuations()) for ex in task.examples]
    _checked(scorer, task, groups)
    size, total = chunk or _chunk(scorer, task), len(groups)
    done: list[ExampleScores] = []
    notices: list[Notice] = []
    began = time.perf_counter()
    for start in range(0, total, size):
        stop = min(total, start + size)
        try:
            cancel.check()
            scored = scorer.score(groups[start:stop])
        except cancel.RequestStopped as err:
            if err.reason == "gone" or not done:
                raise
            notices.append(_stopped(scorer, len(done), total, err))
            break
        except ServedError:
            raise
        except ExplorerError as err:
            raise ExplorerError(f"{_lines(task, start, stop).capitalize()} of {task.source}: {err}") from None
        done.extend(_scores(i, s) for i, s in zip(range(start, stop), scored, strict=True))
        if progress is not None:
            progress(len(done) / total, f"{scorer.key}: {len(done):,} of {total:,} examples scored")
    where = scorer.where()
    return ModelRun(scorer.key, scorer.family, scorer.method, task.kind, tuple(done), total,
                    time.perf_counter() - began, scorer.untrained, tuple(notices), where["device"],
                    where["device_name"], where["dtype"])
