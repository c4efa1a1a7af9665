"""Drawing of the Forward pass page: one model's current step (its place in the block, its tensor, a token's
vector, how close it is to the model's own value), what two cards do differently, the stream's norms, the
prediction."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from app import ui
from app.views.device_picker import ran_caption
from explorer.architecture.anatomy.describe import described, differences
from explorer.core.labels import escape_markdown
from explorer.internals.forward import align
from explorer.internals.forward.steps import Step
from explorer.internals.forward.walk import Walk
from explorer.plots import forward as plots

__all__ = ["column", "group_label", "groups", "how_they_differ", "predictions", "step_label", "stream"]


def group_label(step: Step, steps: Sequence[Step], index: int) -> str:
    """Where a step is: "embeddings", "layer 3" or "readout" (with the stack for an encoder-decoder)."""
    place = align.region(step, tuple(steps), index)
    where = {"embed": "embeddings", "head": "readout"}.get(place, f"layer {step.layer}")
    return f"{step.stack} {where}"


def groups(walk: Walk) -> dict[str, int]:
    """Each place of the walk (embeddings, every layer, the readout) and its first step's index, in order."""
    found: dict[str, int] = {}
    for i, s in enumerate(walk.steps):
        found.setdefault(group_label(s, walk.steps, i), i)
    return found


def step_label(walk: Walk, index: int) -> str:
    s = walk.steps[index]
    return f"{index + 1}. {group_label(s, walk.steps, index)} · {s.name}"


def _error(step: Step) -> str:
    if step.max_abs_error is None:
        return "not compared: the model keeps no value at this point"
    where = f"`{step.checked_against}`" if step.checked_against else "the model's own value"
    how = "at this very point" if step.exact else "at the nearest later point the model keeps"
    return f"max |recomputed − model's own| = {step.max_abs_error:.2g}, checked against {where} {how}"


def column(walk: Walk, index: int | None, head: int, token: int, key: str) -> None:
    """One model's column: its card in words, the current step (or why it has none here) and its figures."""
    st.subheader(escape_markdown(f"{walk.model}: {walk.card.card.label}"))
    if walk.untrained:
        ui.notice(ui.UNTRAINED)
    ui.notices([n for n in walk.notices if n.kind != "untrained"])
    st.caption(f"{len(walk.steps)} steps · {len(walk.tokens)} tokens · recomputed in {walk.seconds:.2f} s · "
               f"{ran_caption(walk)}")
    if index is None:
        st.info(f"{escape_markdown(walk.card.card.label)} has no step of this kind at this depth.",
                icon=":material/block:")
        return
    step = walk.steps[index]
    st.markdown(f"**{escape_markdown(step_label(walk, index))}**" + (f" — {escape_markdown(step.note)}"
                                                                       if step.note else ""))
    st.caption(escape_markdown(f"{step.kind} · shape {' x '.join(map(str, step.shape))} "
                               f"({', '.join(step.axes)}) · mean {step.mean:.4g} · std {step.std:.4g}"))
    st.caption(escape_markdown(_error(step), keep_code=True))
    for name, values in step.statistics:
        shown = ", ".join(f"{v:.3g}" for v in values[:8]) + (" …" if len(values) > 8 else "")
        st.caption(escape_markdown(f"{name} per token: {shown}"))
    ui.figure(plots.block_flow(walk, index), f"forward-block-{key}", key=f"fw_block_{key}")
    if step.tensor is not None:
        ui.figure(plots.step_figure(walk, step, head), f"forward-step-{key}", key=f"fw_step_fig_{key}")
        if "vocabulary" not in step.axes:
            ui.figure(plots.token_vector(walk, step, token, head), f"forward-token-{key}", key=f"fw_token_{key}")


def how_they_differ(walks: Sequence[Walk]) -> None:
    """What the cards say, aspect by aspect; with two models, only where they differ."""
    if len(walks) == 2:
        said = differences(walks[0].card, walks[1].card)
        st.markdown("**How they differ** (from the two anatomy cards)")
        st.markdown("\n".join(f"- {escape_markdown(d)}" for d in said) or "Their cards agree on every aspect.")
        return
    st.markdown(f"**{escape_markdown(walks[0].card.card.label)}, aspect by aspect** (its anatomy card)")
    st.markdown("\n".join(f"- {k}: {escape_markdown(v)}" for k, v in described(walks[0].card).items()))


def stream(walks: Sequence[Walk], token: int) -> None:
    ui.figure(plots.stream_norms([(w, align.stream(w)) for w in walks], token), "forward-stream", key="fw_stream")


def predictions(walks: Sequence[Walk]) -> None:
    for col, w in zip(st.columns(len(walks)), walks, strict=True):
        with col:
            if w.top:
                ui.figure(plots.prediction(w), f"forward-top-{w.model}", key=f"fw_top_{w.model}")
            err = "" if w.logits_max_abs_error is None else \
                f" · recomputed logits against the model's own forward: max error {w.logits_max_abs_error:.2g}"
            st.caption(escape_markdown(f"{w.model}{err}"))
