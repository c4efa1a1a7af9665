"""Accuracy by slice: the examples grouped by a field of the task file, or by the length of their context.

A field with few values (``topic``, ``difficulty``, a boolean) gives one slice per value; a numeric field with
many values, and the context's length in characters (``LENGTH``), give three slices of about equal size (thirds
of the sorted values). Each slice carries every model's accuracy on the examples of it that model scored, with
Wilson's interval, so a slice of five examples shows how little it says.

>>> from explorer.evaluation.task import Example
>>> ex = [Example(i, i + 1, "x" * (i + 1), ("a", "b"), 0, (("topic", "t" + str(i % 2)),)) for i in range(6)]
>>> [(g.value, g.indices) for g in groups(ex, "topic")]
[('t0', (0, 2, 4)), ('t1', (1, 3, 5))]
>>> [g.value for g in groups(ex, LENGTH)]
['1-2 characters', '3-4 characters', '5-6 characters']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from explorer.core.errors import ExplorerError
from explorer.evaluation.report import Accuracy, Report
from explorer.evaluation.task import Example, Task

__all__ = ["LENGTH", "MANY", "Group", "Slice", "groups", "slices"]

LENGTH = "context length"  # slicing by the context's length in characters
MANY = 12  # a field with more distinct numeric values than this is cut into thirds


@dataclass(frozen=True)
class Group:
    value: str  # the field's value, or a range ("12-40 characters")
    indices: tuple[int, ...]  # examples in it, in task order


@dataclass(frozen=True)
class Slice:
    """One group's accuracy per model."""

    by: str
    value: str
    examples: int
    accuracy: tuple[tuple[str, Accuracy], ...]  # (model, its accuracy on the slice's examples it scored)


def _thirds(examples: Sequence[Example], values: dict[int, float], unit: str) -> list[Group]:
    order = sorted(values, key=lambda i: (values[i], i))
    out = []
    for k in range(3):
        part = order[k * len(order) // 3:(k + 1) * len(order) // 3]
        if part:
            low, high = values[part[0]], values[part[-1]]
            label = f"{low:g}-{high:g}{unit}" if low != high else f"{low:g}{unit}"
            out.append(Group(label, tuple(sorted(part))))
    return out


def groups(examples: Sequence[Example], by: str) -> list[Group]:
    """The examples grouped by the field ``by`` (or by :data:`LENGTH`); examples without the field are left out."""
    if by == LENGTH:
        return _thirds(examples, {ex.index: float(len(ex.context)) for ex in examples}, " characters")
    present = {ex.index: ex.field(by) for ex in examples if ex.field(by) is not None}
    if not present:
        raise ExplorerError(f"No example has the field {by!r}: slice by one of the task's fields, or by {LENGTH}.")
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in present.values())
    if numeric and len(set(present.values())) > MANY:
        return _thirds(examples, {i: float(v) for i, v in present.items()}, "")  # type: ignore[arg-type]
    by_value: dict[str, list[int]] = {}
    for i, v in present.items():
        by_value.setdefault(str(v), []).append(i)
    return [Group(v, tuple(ix)) for v, ix in sorted(by_value.items())]


def slices(report: Report, task: Task, by: str) -> tuple[Slice, ...]:
    """Every group's accuracy for every model of ``report`` (a run that stopped early counts what it scored)."""
    out = []
    for group in groups(task.examples, by):
        per_model = []
        for run in report.runs:
            hits = [run.correct(i, task.examples[i].answer) for i in group.indices if run.scored(i) is not None]
            per_model.append((run.model, Accuracy.of(hits)))
        out.append(Slice(by, group.value, len(group.indices), tuple(per_model)))
    return tuple(out)
