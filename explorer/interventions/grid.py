"""A patching grid, the result: every cell's metric, normalised so 0 is the corrupted run and 1 the clean one.

>>> g = PatchGrid(model="demo", family="decoder", stack="decoder", site="resid", metric="logit-diff",
...               clean_tokens=("a", "b"), corrupt_tokens=("a", "c"), columns=("a", "b"), target=" x", foil=" y",
...               clean_metric=2.0, corrupt_metric=-2.0, values=((-2.0, 2.0), (float("nan"), 2.0)),
...               depth=(0.0, 1.0), first_difference=1)
>>> g.grid
((0.0, 1.0), (nan, 1.0))
>>> g.to_dict()["grid"], g.cells_done
([[0.0, 1.0], [None, 1.0]], 3)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from explorer.core.labels import untrained_suffix
from explorer.core.notices import Notice, texts
from explorer.interventions import metrics
from explorer.interventions.plan import Plan

__all__ = ["PatchGrid", "json_number"]


def json_number(value: float, digits: int = 6) -> float | None:
    """A float for JSON: rounded, NaN (a cell not computed) as None."""
    return None if math.isnan(value) else round(float(value), digits)


@dataclass(frozen=True)
class PatchGrid:
    """Layers x columns (positions, or heads for ``site == "heads"``) of one patching experiment."""

    model: str
    family: str  # "decoder", "encoder", "encoder-decoder"
    stack: str  # the stack patched: "decoder" or "encoder"
    site: str  # resid, attn, mlp or heads
    metric: str  # logit-diff, prob or kl
    clean_tokens: tuple[str, ...]
    corrupt_tokens: tuple[str, ...]
    columns: tuple[str, ...]  # the grid's column labels: the clean tokens, or "head 0", "head 1", ...
    target: str
    foil: str | None
    clean_metric: float
    corrupt_metric: float
    values: tuple[tuple[float, ...], ...]  # (layers, columns) the metric of each patched run; NaN: not computed
    depth: tuple[float, ...]  # each layer's relative depth, 0 (first) to 1 (last)
    first_difference: int  # positions before it are the same tokens in both prompts
    plan: Plan | None = None
    notices: tuple[Notice, ...] = ()
    untrained: bool = False
    seconds: float = 0.0
    device: str = "cpu"  # what ran (placement.ran_on)
    device_name: str = "cpu"
    dtype: str = "float32"

    @property
    def grid(self) -> tuple[tuple[float, ...], ...]:
        """The values normalised: 0 = corrupted run, 1 = clean run (:func:`.metrics.normalise`)."""
        return tuple(tuple(metrics.normalise(v, self.clean_metric, self.corrupt_metric, self.metric) for v in row)
                     for row in self.values)

    @property
    def cells_done(self) -> int:
        return sum(not math.isnan(v) for row in self.values for v in row)

    @property
    def title(self) -> str:
        what = {"resid": "residual stream", "attn": "attention output", "mlp": "MLP output",
                "heads": "attention head outputs"}[self.site]
        stack = f" ({self.stack} stack)" if self.family == "encoder-decoder" else ""
        return f"Patching the {what}{stack}: {metrics.LABELS[self.metric]} restored{untrained_suffix(self.untrained)}"

    def rows(self) -> list[dict[str, object]]:
        """One row per cell (the CSV download): layer, depth, column, raw metric, normalised."""
        return [{"layer": i, "depth": round(self.depth[i], 4), "column": j, "label": self.columns[j],
                 "metric": json_number(v), "restored": json_number(n)}
                for i, (row, norm) in enumerate(zip(self.values, self.grid, strict=True))
                for j, (v, n) in enumerate(zip(row, norm, strict=True))]

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "family": self.family, "stack": self.stack, "site": self.site,
                "metric": self.metric, "clean_tokens": list(self.clean_tokens),
                "corrupt_tokens": list(self.corrupt_tokens), "columns": list(self.columns), "target": self.target,
                "foil": self.foil, "clean_metric": json_number(self.clean_metric),
                "corrupt_metric": json_number(self.corrupt_metric),
                "grid": [[json_number(v) for v in row] for row in self.grid],
                "values": [[json_number(v) for v in row] for row in self.values],
                "relative_depth": [round(d, 4) for d in self.depth], "first_difference": self.first_difference,
                "cells_done": self.cells_done, "plan": self.plan.to_dict() if self.plan else None,
                "notices": texts(self.notices), "untrained": self.untrained, "seconds": round(self.seconds, 3),
                "device": self.device, "device_name": self.device_name, "dtype": self.dtype}
