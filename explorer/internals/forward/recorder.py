"""The steps of one walk, each compared with the model's own intermediate as it is recorded.

A step names the :class:`~explorer.internals.forward.hooks.Point` whose hooked value it equals and how to lay that
value out like the step's tensor (``view``: heads split, a slice of a fused projection). A step with no such point
(scores and softmax inside a fused attention kernel, a rotation) waits: the next step that has one vouches for it,
and it says so (``exact`` False, ``checked_against`` the later point). With ``head``, steps with a head axis keep
that head alone (its key/value head on a "kv-head" axis).
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass, replace

import torch

from explorer.internals.forward.hooks import Captured, Point
from explorer.internals.forward.steps import Step, summary

__all__ = ["Recorder", "View", "batch_row"]

View = Callable[[torch.Tensor], torch.Tensor]


def batch_row(t: torch.Tensor) -> torch.Tensor:
    """The one row of a batch of one: ``(1, ...) -> (...)``."""
    return t[0]


@dataclass
class _Open:
    step: Step
    kept: bool


class Recorder:
    """Steps in the order they are recorded; the walk's state of what is verified."""

    def __init__(self, captured: Captured, *, head: int | None = None, kv_group: int = 1,
                 keep_tensors: bool = True, layers: Container[int] | None = None) -> None:
        self.captured, self.head, self.kv_group = captured, head, max(1, kv_group)
        self.keep_tensors, self.layers = keep_tensors, layers
        self._steps: list[_Open] = []
        self._waiting: list[int] = []

    def _slice(self, tensor: torch.Tensor, axes: tuple[str, ...]) -> tuple[torch.Tensor, tuple[str, ...]]:
        if self.head is None:
            return tensor, axes
        for name, index in (("head", self.head), ("kv-head", self.head // self.kv_group)):
            if name in axes:
                at = axes.index(name)
                return tensor.select(at, min(index, tensor.shape[at] - 1)), axes[:at] + axes[at + 1:]
        return tensor, axes

    def _error(self, tensor: torch.Tensor, point: Point, view: View, axes: tuple[str, ...]) -> float | None:
        seen = self.captured.value(point)
        if seen is None:
            return None
        theirs, _ = self._slice(view(seen).to(tensor.device), axes)
        if theirs.shape != tensor.shape:
            return float("inf")  # a card that does not describe the model lays its tensors out otherwise
        return float((tensor.float() - theirs.float()).abs().nan_to_num(posinf=0.0, neginf=0.0).max())

    def add(self, name: str, kind: str, tensor: torch.Tensor, *, stack: str, layer: int | None = None,
            axes: tuple[str, ...] = ("token", "feature"), point: Point | None = None, view: View = batch_row,
            note: str = "", statistics: tuple[tuple[str, tuple[float, ...]], ...] = ()) -> torch.Tensor:
        """Record ``tensor`` (returned unchanged) as a step; with ``point``, compare it with the model's value there."""
        shown, shown_axes = self._slice(tensor, axes)
        stats = summary(shown, shown_axes)
        error = self._error(shown, point, view, axes) if point is not None else None
        kept = self.layers is None or layer is None or layer in self.layers
        step = Step(len(self._steps), name, kind, stack, layer, shown_axes, tuple(shown.shape), stats.mean, stats.std,
                    stats.token_norms, error, point.label if point else None, point is not None, note, statistics,
                    shown.detach() if self.keep_tensors and kept else None)
        self._steps.append(_Open(step, kept))
        if point is None:
            self._waiting.append(len(self._steps) - 1)
        else:
            self._vouch(error, point.label)
        return tensor

    def _vouch(self, error: float | None, label: str | None) -> None:
        """The steps waiting for a checked point get this one's."""
        for index in self._waiting:
            open_ = self._steps[index]
            open_.step = replace(open_.step, max_abs_error=error, checked_against=label, exact=False)
        self._waiting.clear()

    def finish(self, error: float | None, label: str | None) -> tuple[Step, ...]:
        """The steps kept; any still waiting are vouched for by the final check (the model's own logits)."""
        self._vouch(error, label)
        return tuple(o.step for o in self._steps if o.kept)
