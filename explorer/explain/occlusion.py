"""Occlusion: each shown token left out of the text, the explained number read again; batched, anytime.

A token's score is ``f(text) - f(text without it)``: positive when the token raises the target. Leaving a token
out deletes it (what a served model can be asked too, :mod:`explorer.explain.served`), so every frame of a batch
is the text minus one token: equal lengths, no padding wasted. Frames run ``per_batch`` at a time (the memory
planner's figure, :mod:`explorer.explain.cost`); between batches the request's budget is checked, and when it
runs out the tokens done so far are kept, the others left without a score, and a notice says how many.
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

__all__ = ["Occluded", "cut_notice", "occlusion"]


@dataclass(frozen=True)
class Occluded:
    scores: list[float | None]  # one per shown token; None: not reached before the budget ran out
    output: float
    notices: tuple[Notice, ...] = ()


def cut_notice(done: int, total: int, err: RequestStopped) -> Notice:
    """What an occlusion stopped by its budget says: how many tokens have a score, and why not the rest."""
    return Notice("stopped", f"Occlusion scored {done} of {total} tokens before this request's budget ran out "
                             f"(the others are left blank): {err}")


def occlusion(model: torch.nn.Module, frame: Frame, per_batch: int,
              progress: Callable[[float, str], None] | None = None) -> Occluded:
    """Every shown token left out in turn, ``per_batch`` frames per forward (see the module docstring)."""
    embedder = Embedder(model)
    output = float(values(model, [frame], embedder)[0])
    total, scores = len(frame.shown), list[float | None]()
    step = max(1, int(per_batch))
    try:
        for start in range(0, total, step):
            cancel.check()
            chunk = [frame.without(k) for k in range(start, min(total, start + step))]
            scores += [output - float(v) for v in values(model, chunk, embedder)]
            if progress is not None:
                progress(len(scores) / total, f"occlusion: {len(scores)} of {total} tokens")
    except RequestStopped as err:
        if err.reason == "gone":
            raise
        return Occluded(scores + [None] * (total - len(scores)), output, (cut_notice(len(scores), total, err),))
    return Occluded(scores, output)
