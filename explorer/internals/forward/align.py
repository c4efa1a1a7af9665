"""Two walks side by side: the step of one model that matches a step of the other, and each stream's norms.

Steps line up by kind (:data:`explorer.internals.forward.steps.KINDS`): at the same relative depth (BERT's layer 6
of 12 beside Gemma's layer 9 of 18), the n-th step of the same kind in that layer (the second "norm" of a layer is
BERT's after the MLP, Gemma's after its attention: the sandwich shows). A kind the other model has not got there
(BERT rotates nothing) has no counterpart, and the page says so.

>>> relative_layer(6, 12, 18), relative_layer(0, 1, 6), relative_layer(5, 6, 1)
(9, 0, 0)
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.internals.forward.steps import Step
from explorer.internals.forward.walk import Walk

__all__ = ["StreamPoint", "counterpart", "layer_count", "region", "relative_layer", "stream"]


def relative_layer(layer: int, layers: int, other_layers: int) -> int:
    """The layer at the same relative depth in a stack of ``other_layers``."""
    if layers <= 1 or other_layers <= 1:
        return 0
    return round(layer / (layers - 1) * (other_layers - 1))


def layer_count(walk: Walk, stack: str) -> int:
    """Layers of ``stack`` in the walk's model (its main stack's when it has no such stack)."""
    names = [s.name for s in walk.card.stacks]
    return walk.card.stack(stack if stack in names else walk.card.main.name).layers


def region(step: Step, steps: tuple[Step, ...], index: int) -> str:
    """"embed" (before the first layer), "layer" or "head" (after the last)."""
    if step.layer is not None:
        return "layer"
    return "embed" if any(s.layer is not None and s.stack == step.stack for s in steps[index:]) else "head"


def counterpart(a: Walk, index: int, b: Walk) -> int | None:
    """The index of ``b``'s step that matches ``a``'s step ``index`` (see the module docstring), or None."""
    step = a.steps[index]
    stacks = [s.name for s in b.card.stacks]
    stack = step.stack if step.stack in stacks else b.card.main.name
    place = region(step, a.steps, index)
    layer = None if step.layer is None else relative_layer(step.layer, layer_count(a, step.stack),
                                                           layer_count(b, stack))

    def same_place(steps: tuple[Step, ...], i: int, s: Step, where: str, lay: int | None) -> bool:
        return s.stack == where and s.layer == lay and region(s, steps, i) == place

    mine = [i for i, s in enumerate(a.steps) if same_place(a.steps, i, s, step.stack, step.layer)
            and s.kind == step.kind]
    theirs = [i for i, s in enumerate(b.steps) if same_place(b.steps, i, s, stack, layer) and s.kind == step.kind]
    if not theirs:
        return None
    return theirs[min(mine.index(index), len(theirs) - 1)]


@dataclass(frozen=True)
class StreamPoint:
    """The residual stream at one point: after the embeddings (``layer`` None) or after a layer."""

    stack: str
    layer: int | None
    step: int  # the step whose output it is
    token_norms: tuple[float, ...]


def stream(walk: Walk) -> tuple[StreamPoint, ...]:
    """The stream after the embeddings and after every layer, each stack in turn: the last step of each."""
    points: list[StreamPoint] = []
    for i, s in enumerate(walk.steps):
        if region(s, walk.steps, i) == "head":
            continue
        following = walk.steps[i + 1] if i + 1 < len(walk.steps) else None
        if following is None or (following.stack, following.layer) != (s.stack, s.layer):
            points.append(StreamPoint(s.stack, s.layer, i, s.token_norms))
    return tuple(points)
