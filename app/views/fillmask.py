"""Drawing the Fill-mask page's answers (Streamlit only; every decision comes from explorer.tasks.fillmask / fillbatch).

One prompt: a column per model (a :class:`~explorer.serving.backend.Backend`, here or served, each asked the same
way) with its top-k per mask, each drawn as soon as its model has answered (one request per model; each guarded in
its column), a chart and a CSV. Several prompts (one per
line): a table with one row per prompt and one column per model (its best words per mask), per-line
messages for lines that could not run, and the full top-k of every prompt as CSV.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from app import ui
from app.views import device_picker
from explorer.core.errors import ExplorerError, shorten
from explorer.core.labels import escape_markdown
from explorer.core.notices import Notice
from explorer.plots import fillmask as plots
from explorer.runtime.resolve import ModelRef
from explorer.serving.backend import Backend
from explorer.tasks.fillmask.batch import BatchFill
from explorer.tasks.fillmask.result import FillMaskResult, ModelFill

SHOWN = 3  # best words per mask in a cell of the several-prompt table (the CSV has all of top-k)


def model_errors(errors: list[tuple[str, str]] | tuple[tuple[str, str], ...], refs: dict[str, ModelRef],
                 skipped: tuple[str, ...] = ()) -> None:
    """The other models still answer; weights not downloaded yet, or a model left out to keep the request
    within its memory budget, are a warning (what to do), not a failure."""
    for spec, message in errors:
        missing = spec in refs and refs[spec].missing
        (st.warning if missing or spec in skipped else st.error)(
            ui.markdown_safe(f"{shorten(spec)}: {message}"), icon=":material/cloud_download:" if missing
            else ":material/memory:" if spec in skipped else ":material/error:")


def _column(f: ModelFill) -> None:
    """One model's answer in its column: caption (what ran), the filled prompt, notices, top-k per mask."""
    if f.untrained:
        ui.notice(ui.UNTRAINED)
    st.caption(f"{device_picker.ran_caption(f)} · {f.latency_ms:.0f} ms · {f.n_tokens} tokens")
    st.text(f.filled)  # top-1 answer in place; st.text shows user text verbatim (no markdown)
    ui.notices(f.notices)
    for m in f.masks:
        st.markdown(f"**Mask {m.index + 1}**")
        st.dataframe(pd.DataFrame([{"word": p.word, "token": p.token, "probability": p.score}
                                   for p in m.predictions]), hide_index=True, width="stretch",
                     column_config={"probability": st.column_config.ProgressColumn(
                         format="%.3f", min_value=0.0, max_value=1.0)})


def _model_column(model: Backend, answer: Callable[[Backend], FillMaskResult]) -> list[ModelFill]:
    """One model's column, drawn as soon as its request is done: its answer (perhaps cut, with its notice), or why
    it could not answer (a warning for weights to download or a model left out for memory, else an error, under
    the model's name)."""
    with st.spinner(f"{shorten(model.shown)}…"):
        try:
            result = answer(model)
        except ExplorerError:
            st.subheader(escape_markdown(model.shown), divider="gray")
            raise
    model_errors(result.errors, {model.ref.spec: model.ref} if model.ref else {}, result.skipped)
    for f in result.models:
        st.subheader(escape_markdown(f.name), divider="gray")
        _column(f)
    return list(result.models)


def columns(models: Sequence[Backend], answer: Callable[[Backend], FillMaskResult], started: float) -> None:
    """One prompt: a column per model, each filled as soon as its model has answered (``answer(model)``: one request
    per model, so a slow model is cut in its own column and the others are not held back), each column guarded on
    its own. Then the top-k chart for a chosen mask, and the CSV (``started``: the page's ``time.perf_counter()``
    when it began, for the caption)."""
    cols = st.columns(max(1, len(models)))
    fills: list[ModelFill] = []
    for col, model in zip(cols, models, strict=False):
        with col, ui.guard():
            fills += _model_column(model, answer)
    if not fills:
        return
    st.caption(f"{len(fills)} model(s) answered in {(time.perf_counter() - started) * 1000:.0f} ms for this page, "
               "one request each (repeated prompts come from the cache).")
    n_masks = max(len(f.masks) for f in fills)
    mask = st.radio("Chart for mask", range(n_masks), format_func=lambda i: f"mask {i + 1}", horizontal=True,
                    key="fm_mask") if n_masks > 1 else 0
    ui.figure(plots.topk_figure(fills, mask or 0), "fill_mask_topk", key="fm_fig")
    rows = [{"model": f.name, "untrained": f.untrained, "mask": m.index + 1, "rank": r + 1, "word": p.word,
             "token": p.token, "token_id": p.token_id, "probability": p.score}
            for f in fills for m in f.masks for r, p in enumerate(m.predictions)]
    ui.csv_download(pd.DataFrame(rows), "fill_mask", key="fm_csv")


def batch(result: BatchFill, refs: dict[str, ModelRef], wall_ms: float) -> None:
    """Several prompts: what was cut, per-line messages, then one row per prompt and the CSV."""
    ui.notices(result.notices)
    model_errors(result.model_errors(), refs)
    refused = [p for p in result.prompts if p.error]
    if refused:  # one box for every line that could not run, each with its own reason
        st.warning("\n\n".join(ui.markdown_safe(f"Line {p.line}: {p.error}") for p in refused),
                   icon=":material/edit_note:")
    answered = result.answered()
    fills = [f for p in answered if p.result is not None for f in p.result.models]
    if not fills:
        return
    if any(f.untrained for f in fills):
        ui.notice(ui.UNTRAINED)
    cut = sum(1 for f in fills if any(n.kind == "truncated" for n in f.notices))
    if cut:
        ui.notice(Notice("truncated", f"{cut} answer(s) came from prompts longer than the model reads: cut around "
                         "their masks (the CSV's notice column says where)."))
    devices = ", ".join(sorted({device_picker.ran_caption(f) for f in fills}))
    st.caption(f"{len(answered)} prompt(s) answered in {wall_ms:.0f} ms ({devices}; masked LMs run the prompts "
               f"in batches). Each cell: the {SHOWN} best words per mask with their probability; masks "
               "separated by |.")
    table = pd.DataFrame(result.summary(SHOWN)).fillna("")  # a refused line has no model cells
    st.dataframe(table, hide_index=True, width="stretch", key="fm_batch_table")
    ui.csv_download(pd.DataFrame(result.rows()), "fill_mask_prompts", label="Download CSV (every prompt, top-k)",
                    key="fm_batch_csv")
