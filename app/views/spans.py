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
from explorer.runtime.placement import PlacementKwargs
from explorer.runtime.resolve import ModelRef
from explorer.serving.endpoints import Endpoint
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


def infill_column(ref: ModelRef, prompt: str, max_new: int, where: PlacementKwargs) -> None:
    """One model's column (``ref``: resolved by the page): weights status, filled-in text with highlighted spans, raw
    output (``where``: the sidebar's device and dtype, :func:`app.views.device_picker.pick`)."""
    model = ref.spec
    st.subheader(escape_markdown(Path(model).name if "/" in model else model))
    if "/" in model:  # a directory: the full path under its short name
        st.caption(escape_markdown(model))
    if not ref.ready and not ref.random_weights:
        not_ready(ref)
        return
    with ui.guard():
        res = cache.fill_spans(ref, prompt, max_new, **where)
        if res.untrained:
            ui.notice(ui.UNTRAINED)
        st.markdown(plots.segments_markdown(res.segments))
        ui.notices(res.notices)
        kind = "decoder (causal LM)" if res.family == "causal" else res.family.upper()
        st.caption(f"{kind} · {ran_caption(res)} · {res.seconds * 1000:.0f} ms")
        with st.expander("Model input and raw output"):
            st.code(res.model_input, language=None, wrap_lines=True)
            st.code(res.raw_output, language=None, wrap_lines=True)


def served_infill_column(ep: Endpoint, prompt: str, max_new: int) -> None:
    """A served decoder's column: the same filled-in text and notices as a local decoder's, saying which server
    answered; a server that fails is one message here and the other columns go on."""
    st.subheader(f"{escape_markdown(ep.shown)} (served)")
    with ui.guard():
        res = cache.served_spans(ep, prompt, max_new)
        st.markdown(plots.segments_markdown(res.segments))
        ui.notices(res.notices)
        st.caption(f"decoder (causal LM) · {ran_caption(res)} · {res.seconds * 1000:.0f} ms")
        with st.expander("Model input and raw output"):
            st.code(res.model_input, language=None, wrap_lines=True)
            st.code(res.raw_output, language=None, wrap_lines=True)


def served_answer(ep: Endpoint, question: str, context: str) -> None:
    """A served decoder's written answer below the local one, in its own guarded box."""
    with st.container(border=True), ui.guard():
        st.markdown(f"**{ui.markdown_safe(ep.shown)}** (served)")
        generative_answer(cache.served_answer(ep, question, context))


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
