"""Cached wrappers of the Spans & QA page: span infilling (decoder, T5, BART) and QA (generative, extractive).

Models come from ``explorer.runtime.loading.load_model`` (one process-wide LRU cache shared by all sessions;
not wrapped again in ``st.cache_resource`` so that cache can free memory). Results are
``st.cache_data``: a second identical request is answered from the cache. ExplorerErrors are not
cached: they reach ``ui.guard``.
"""

from __future__ import annotations

import streamlit as st

from explorer.runtime import workers
from explorer.runtime.resolve import ModelRef
from explorer.serving import spans
from explorer.serving.endpoints import Endpoint
from explorer.tasks import defaults, infill, qa
from explorer.tasks.causal.answer import GenerativeAnswer


@st.cache_data(max_entries=8, show_spinner=False, ttl=60)
def infill_keys(directory: str | None = None) -> list[str]:
    """Variants that can infill spans, and the lab's trained T5, BART and decoders (a minute: new ones appear)."""
    return defaults.infill_keys(directory)


@st.cache_data(max_entries=8, show_spinner=False, ttl=60)
def lab_labels(directory: str | None = None) -> dict[str, str]:
    """Labels of the lab's models the Spans page offers ("trained here (N steps on M words)")."""
    return defaults.lab_models("infill", directory)


@st.cache_data(max_entries=1, show_spinner=False)
def qa_models() -> list[str]:
    """The bundled decoder, then the SQuAD checkpoints."""
    return qa.qa_models()


@st.cache_data(max_entries=16, show_spinner=False, ttl=60)
def default_models(directory: str | None) -> list[str]:
    """Models whose weights are on disk among the decoder, T5-small and BART-base (a minute: downloads appear)."""
    return defaults.spans_defaults(directory)


@st.cache_data(max_entries=32, show_spinner="Generating…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def fill_spans(ref: ModelRef, prompt: str, max_new_tokens: int, device: str = "auto",
               dtype: str = "auto") -> infill.InfillResult:
    """The prompt filled in by a decoder, T5 or BART (keyed by the ref, whose stamp changes with its weights)."""
    return infill.run(ref, prompt, max_new_tokens, device=device, dtype=dtype)


@st.cache_data(max_entries=32, show_spinner="Reading the context…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def answer(ref: ModelRef, question: str, context: str, max_answer_len: int, device: str = "auto",
           dtype: str = "auto") -> qa.QAResult | GenerativeAnswer:
    """A decoder's written answer, or a reader's best span with its start/end probability strip (keyed by the
    ref, whose stamp changes with its weights)."""
    return qa.ask(ref, question, context, max_answer_len, device=device, dtype=dtype)


@st.cache_data(max_entries=32, ttl=600, show_spinner="The served decoder scores each candidate's whole text…")
@workers.remote  # the request budget, no local model slot: the engine does the work
def served_spans(ep: Endpoint, prompt: str, max_new_tokens: int) -> infill.InfillResult:
    """The prompt filled in by a served decoder (keyed by the Endpoint; ten minutes: a server can change)."""
    return spans.infill_spans(ep, prompt, max_new_tokens)


@st.cache_data(max_entries=32, ttl=600, show_spinner="The served decoder writes its answer…")
@workers.remote
def served_answer(ep: Endpoint, question: str, context: str) -> GenerativeAnswer:
    """A served decoder's written answer, located in the context."""
    return spans.ask(ep, question, context)
