"""Occlusion: each shown token left out of the text, the explained number read again; batched, anytime.

A token's score is ``f(text) - f(text without it)``: positive when the token raises the target. Leaving a token
out deletes it (what a served model can be asked too, :mod:`explorer.explain.served`), so every frame of a batch
is the text minus one token: equal lengths, no padding wasted. Frames run ``per_batch`` at a time (the memory
planner's figure, :mod:`explorer.explain.cost`). Before each batch the request's time left is compared with the
last batch's time: a batch that would not fit is not started, so the work stops within the budget with the tokens
done so far kept, the others left without a score, and a notice saying how many. ``span`` occludes only the
shown tokens ``first`` to ``last`` (a part of the text: the page asks for a text in parts,
:mod:`explorer.explain.parts`, and the others are left without a score).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from explorer.core.notices import Notice
from explorer.explain.frame import Frame
from explorer.explain.scorer import Embedder, values
from explorer.runtime import cancel
from explorer.runtime.cancel import RequestStopped

__all__ = ["Occluded", "cut_notice", "in_rounds", "occlusion"]


@dataclass(frozen=True)
class Occluded:
    scores: list[float | None]  # one per shown token; None: not reached (budget) or outside the span
    output: float
    notices: tuple[Notice, ...] = ()


def cut_notice(done: int, total: int, err: RequestStopped | str) -> Notice:
    """What an occlusion stopped by its budget says: how many tokens have a score, and why not the rest."""
    return Notice("stopped", f"Occlusion scored {done} of {total} tokens before this request's budget ran out "
                             f"(the others are left blank): {err}")


def _no_room(last_batch: float) -> RequestStopped | None:
    """Why the next batch is not started (it would not fit the time left, judged by the last batch), or None."""
    if cancel.room_for(last_batch):
        return None
    left = cancel.seconds_left() or 0.0
    return RequestStopped(f"the next batch would take about {last_batch:.1f} s and {left:.1f} s are left.", "time")


def in_rounds(score: Callable[[range], list[float]], first: int, last: int, per_round: int,
              progress: Callable[[float, str], None] | None = None, what: str = "occlusion"
              ) -> tuple[dict[int, float], tuple[Notice, ...]]:
    """The scores of the tokens ``first`` to ``last``, ``per_round`` at a time (``score(tokens)``: theirs, here or
    from a server), anytime: a round that would not fit the time left (judged by the last one) is not started, and a
    request stopped between rounds keeps what was scored, with a notice saying how many. The one loop of local and
    served occlusion."""
    found: dict[int, float] = {}
    step, last_round = max(1, int(per_round)), 0.0
    try:
        for start in range(first, last, step):
            cancel.check()
            if (stop := _no_room(last_round)) is not None:
                raise stop
            began = cancel.now()
            tokens = range(start, min(last, start + step))
            found.update(zip(tokens, score(tokens), strict=True))
            last_round = cancel.now() - began
            if progress is not None:
                progress(len(found) / max(1, last - first), f"{what}: {len(found)} of {last - first} tokens")
    except RequestStopped as err:
        if err.reason == "gone":
            raise
        return found, (cut_notice(len(found), last - first, err),)
    return found, ()


def occlusion(model: torch.nn.Module, frame: Frame, per_batch: int,
              progress: Callable[[float, str], None] | None = None, span: tuple[int, int] | None = None) -> Occluded:
    """Every shown token (of ``span``) left out in turn, ``per_batch`` frames per forward (see the module)."""
    embedder = Embedder(model)
    total = len(frame.shown)
    first, last = (0, total) if span is None else (max(0, span[0]), min(total, span[1]))
    output = float(values(model, [frame], embedder)[0])
    found, notes = in_rounds(lambda ks: [output - float(v) for v in values(model, [frame.without(k) for k in ks],
                                                                           embedder)], first, last, per_batch,
                             progress)
    return Occluded([found.get(k) for k in range(total)], output, notes)
