"""Cached wrappers of the Spans & QA page: span infilling (decoder, T5, BART) and QA (generative, extractive).

A model is a :class:`~explorer.serving.backend.Backend`, in this process or served, asked the same way (keyed by
its ``ident``, scheduled as it needs: :mod:`app.caches.backends`). Local models come from
``explorer.runtime.loading`` (one process-wide LRU cache shared by all sessions; not wrapped again in
``st.cache_resource`` so that cache can free memory). Results are ``st.cache_data``: a second identical request is
answered from the cache. ExplorerErrors are not cached: they reach ``ui.guard``.
"""

from __future__ import annotations

import streamlit as st

from app.caches.backends import BY_IDENT, TTL, scheduled
from explorer.serving.backend import Answer, Backend
from explorer.tasks import defaults, infill, qa


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


def _infill(model: Backend, prompt: str, max_new_tokens: int) -> infill.InfillResult:
    return model.infill(prompt, max_new_tokens)


def _answer(model: Backend, question: str, context: str, max_answer_len: int) -> Answer:
    return model.answer(question, context, max_answer_len)


@st.cache_data(max_entries=32, ttl=TTL, hash_funcs=BY_IDENT, show_spinner="Filling the blanks…")
def fill_spans(model: Backend, prompt: str, max_new_tokens: int) -> infill.InfillResult:
    """The prompt filled in by a decoder (here or served), T5 or BART."""
    return scheduled(model, _infill, model, prompt, max_new_tokens)


@st.cache_data(max_entries=32, ttl=TTL, hash_funcs=BY_IDENT, show_spinner="Reading the context…")
def answer(model: Backend, question: str, context: str, max_answer_len: int) -> Answer:
    """A decoder's written answer (here or served), or a reader's best span with its start/end probability strip."""
    return scheduled(model, _answer, model, question, context, max_answer_len)
