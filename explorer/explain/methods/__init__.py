"""The attribution methods, one record each, one file per method in this package (torch-free to import).

A :class:`Method` says everything the run, the cost, the plots, the page and the CLI need to know of it; its
``compute`` does the work (torch and captum are imported inside it, so the CLI lists methods without them).
Adding a method is one file here defining ``METHOD``: :data:`METHODS` finds it.

>>> [m.name for m in METHODS.values()]
['grad', 'grad-input', 'ig', 'smoothgrad', 'occlusion']
>>> METHODS["occlusion"].served, METHODS["grad"].signed
(True, False)
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from explorer.core.errors import ExplorerError, shorten
from explorer.core.notices import Notice

if TYPE_CHECKING:  # typing only: the records never import torch
    from explorer.explain.frame import Frame
    from explorer.runtime.loading import LoadedModel

__all__ = ["METHODS", "Method", "Planned", "Scores", "Work", "method_of"]

# (scores per shown token, the explained number, the baseline's number, completeness, notices, steps used)
Scores = tuple[list[float | None], float, float | None, float | None, tuple[Notice, ...], int | None]


class Planned(Protocol):
    """What a run reads of its cost (:class:`explorer.explain.cost.Cost`): the rows one batch holds."""

    @property
    def rows(self) -> int: ...


@dataclass(frozen=True)
class Work:
    """What one method's run is given: the loaded model, the framed question, integrated gradients' steps (0 for the
    others), the cost estimated before work, and the page's progress and span (occlusion's part)."""

    loaded: LoadedModel
    frame: Frame
    steps: int | str
    cost: Planned
    progress: Callable[[float, str], None] | None = None
    span: tuple[int, int] | None = None


@dataclass(frozen=True)
class Method:
    name: str  # the CLI's and the URL's value
    label: str  # what the page calls it
    order: int  # its place in lists
    signed: bool  # scores have a sign (a diverging colour scale), or are magnitudes
    backward: bool  # needs gradients: never on a served model, and its activations are kept for the backward
    anytime: bool  # can stop halfway and keep what it did: run in parts within a page's budget
    stepped: bool  # takes integrated gradients' steps (``--steps``)
    served: bool  # runs through a served engine's scoring
    typical_flops: float  # FLOP/s on an idle 2-core CPU before this process measured its own pace
    passes: Callable[[int, int], float]  # (shown tokens, steps) -> forward-equivalent passes
    copies: Callable[[int, int], int]  # (shown tokens, steps) -> most copies of the rows one batch needs
    compute: Callable[[Work], Scores]


def _found() -> dict[str, Method]:
    records = []
    for info in pkgutil.iter_modules(__path__):
        record = getattr(importlib.import_module(f"{__name__}.{info.name}"), "METHOD", None)
        if isinstance(record, Method):
            records.append(record)
    return {m.name: m for m in sorted(records, key=lambda m: m.order)}


METHODS: dict[str, Method] = _found()


def method_of(name: object) -> Method:
    """The method named ``name``, or an ExplorerError listing them."""
    if isinstance(name, str) and name in METHODS:
        return METHODS[name]
    raise ExplorerError(f"Unknown attribution method {shorten(str(name))!r}: use one of {', '.join(METHODS)}.")
