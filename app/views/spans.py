"""Drawing the Spans & QA page's results (Streamlit only; every decision comes from explorer.tasks.infill / qa)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from app import ui
from app.caches import spans as cache
from app.views.device_picker import ran_caption
from explorer.core.labels import escape_markdown
from explorer.plots import spans as plots
from explorer.runtime.resolve import ModelRef
from explorer.serving.backend import Backend
from explorer.tasks.causal.answer import GenerativeAnswer
from explorer.tasks.qa import QAResult

MISSING_HINT = ("Tick **Untrained weights** to run the same code with random weights (results are "
                "labelled untrained), or get the real weights as the message says.")


def not_ready(found: ModelRef | None) -> None:
    """Weights not on disk are a state to explain (how to get them); a bad name or path is an error."""
    if found is None:
        st.info("Type a hub id or a directory.", icon=":material/info:")
    elif found.missing:
        st.warning(ui.markdown_safe(found.reason), icon=":material/cloud_download:")
        st.caption(MISSING_HINT)
    else:
        st.error(ui.markdown_safe(found.reason), icon=":material/error:")


def ready(model: Backend) -> bool:
    """A model here whose weights are not on disk (and not asked untrained) is explained, not run; a served one is
    asked."""
    if model.ref is None or model.ref.ready or model.ref.random_weights:
        return True
    not_ready(model.ref)
    return False


def infill_column(model: Backend, prompt: str, max_new: int) -> None:
    """One model's column, here or served: weights status, the filled-in text with highlighted spans, the raw output;
    a model that fails is one message here and the other columns go on."""
    st.subheader(escape_markdown(Path(model.key).name if model.ref and "/" in model.key else model.shown))
    if model.ref and "/" in model.key:  # a directory: the full path under its short name
        st.caption(escape_markdown(model.key))
    if not ready(model):
        return
    with ui.guard():
        res = cache.fill_spans(model, prompt, max_new)
        if res.untrained:
            ui.notice(ui.UNTRAINED)
        st.markdown(plots.segments_markdown(res.segments))
        ui.notices(res.notices)
        kind = "decoder (causal LM)" if res.family == "causal" else res.family.upper()
        st.caption(f"{kind} · {ran_caption(res)} · {res.seconds * 1000:.0f} ms")
        with st.expander("Model input and raw output"):
            st.code(res.model_input, language=None, wrap_lines=True)
            st.code(res.raw_output, language=None, wrap_lines=True)


def answer_box(model: Backend, question: str, context: str, max_len: int, first: bool) -> None:
    """A model's answer: the first model's on the page, the others below it in their own guarded boxes, named."""
    if not ready(model):
        return
    with st.container(border=not first), ui.guard():
        if not first:
            st.markdown(f"**{ui.markdown_safe(model.shown)}**")
        answer(cache.answer(model, question, context, max_len))


def generative_answer(res: GenerativeAnswer) -> None:
    """A decoder's written answer, and where it occurs in the context."""
    st.markdown(f"**Answer (generative):** {escape_markdown(res.answer) or '∅'}")
    where = {"whole": f"found at characters {res.start}–{res.end} of the context",
             "part": f"part of it found at characters {res.start}–{res.end}"}.get(res.match, "not in the context")
    st.caption(f"written token by token by a decoder, then looked up: {where} · {ran_caption(res)} · "
               f"{res.latency_ms:.0f} ms")
    ui.notices(res.notices)
    st.markdown(plots.located_markdown(res.context, res.start, res.end))


def extractive_answer(res: QAResult) -> None:
    """A reader's span with its start/end probability strip."""
    st.markdown(f"**Answer (extractive):** {escape_markdown(res.answer) or '∅'}")
    st.caption(f"score {res.score:.4f} · no-answer score {res.null_score:.4f} · characters "
               f"{res.start_char}–{res.end_char} · {ran_caption(res)} · {res.seconds * 1000:.0f} ms")
    ui.notices(res.notices)
    ui.figure(plots.qa_strip(res), "qa_probabilities", key="qa_strip")
    table = pd.DataFrame({"token": res.tokens, "start_char": [o[0] for o in res.offsets],
                          "p_start": res.start_probs, "p_end": res.end_probs})
    ui.csv_download(table, "qa_probabilities", key="qa_csv")


def answer(res: QAResult | GenerativeAnswer) -> None:
    if res.untrained:
        ui.notice(ui.UNTRAINED)
    if isinstance(res, GenerativeAnswer):
        generative_answer(res)
    else:
        extractive_answer(res)
