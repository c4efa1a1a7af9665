"""Occlusion of a long text in parts, within one request's budget, continued when asked again.

A page cannot hold one request open for as long as a long text's occlusion takes (every token is one more pass),
and a result cut by the budget must not be kept as the answer. So the page asks for the tokens a part at a time
(``part(first, last)``: each its own request, each kept by the page's cache only when it is complete,
``app/caches/anytime.py``): before each part
the time the last one took is compared with what is left of the page's budget, and a part that would not fit is
not started. The result keeps every token scored so far, says how many, and asking again answers the parts done
from the cache and goes on from there (the command line occludes the whole text at once: no budget there).

>>> from explorer.explain.attribution import Attribution, TokenScore
>>> def part(first, last):  # four tokens; a part scores its own, the rest None
...     scores = [float(i) if first <= i < last else None for i in range(4)]
...     return Attribution("m", "occlusion", "next-token", "log p", "x", None, 1.0, None, None,
...                        tuple(TokenScore(str(i), v) for i, v in enumerate(scores)), seconds=1.0)
>>> whole = in_parts(part, size=2, budget=10.0)
>>> [t.score for t in whole.tokens], whole.stopped
([0.0, 1.0, 2.0, 3.0], False)
>>> cut = in_parts(part, size=2, budget=1.5)  # the second part would not fit what the first left
>>> [t.score for t in cut.tokens], cut.stopped
([0.0, 1.0, None, None], True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from explorer.core.notices import Notice
from explorer.explain.attribution import Attribution, TokenScore

__all__ = ["in_parts"]

Part = Callable[[int, int], Attribution]


def _ask(part: Part, first: int, last: int) -> tuple[Attribution, bool]:
    """(the part's result, whether it was cut short)."""
    result = part(first, last)
    return result, result.stopped


def _merged(tokens: list[float | None], result: Attribution, first: int, last: int) -> None:
    for i in range(first, min(last, len(tokens))):
        tokens[i] = result.tokens[i].score


def in_parts(part: Part, size: int, budget: float, progress: Callable[[float, str], None] | None = None,
             ) -> Attribution:
    """Every token occluded ``size`` at a time until done, a part is cut, or the next part would pass ``budget``
    seconds (judged by the last part's time); see the module docstring."""
    first, cut = _ask(part, 0, size)
    total = len(first.tokens)
    scores: list[float | None] = [None] * total
    _merged(scores, first, 0, size)
    spent, last_took, done = first.seconds, first.seconds, min(size, total)
    while done < total and not cut:
        if spent + last_took > budget:
            cut = True
            break
        result, cut = _ask(part, done, done + size)
        _merged(scores, result, done, done + size)
        spent, last_took = spent + result.seconds, result.seconds
        done = min(total, done + size)
        if progress is not None:
            progress(done / total, f"occlusion: {done} of {total} tokens")
    scored = sum(v is not None for v in scores)
    notices = tuple(n for n in first.notices if n.kind != "stopped")
    if scored < total:
        notices += (Notice("stopped", f"Occlusion scored {scored} of {total} tokens within this page's time for one "
                                      "request (the others are left blank): run it again to go on from there, or "
                                      "run it from the command line (python -m explorer attribute ...), which has no "
                                      "time limit."),)
    tokens = tuple(TokenScore(t.token, v, t.part) for t, v in zip(first.tokens, scores, strict=True))
    return replace(first, tokens=tokens, seconds=round(spent, 3), notices=notices)
