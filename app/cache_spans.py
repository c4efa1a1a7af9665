"""Cached wrappers of the spans area: span infilling (T5, BART) and extractive QA.

Models come from ``explorer.loading.load_model`` (one process-wide LRU cache shared by all sessions;
not wrapped again in ``st.cache_resource`` so that cache can free memory). Results are
``st.cache_data``: a second identical request is answered from the cache.
"""

from __future__ import annotations

import streamlit as st

from explorer import catalog, spans
from explorer.errors import ExplorerError
from explorer.loading import load_model
from explorer.weights import locate

# SQuAD checkpoints users are likely to have, and the catalog variant whose architecture and
# tokenizer random-weight mode uses for each (random mode needs a config, which a hub id alone lacks).
QA_CHECKPOINTS: dict[str, str] = {
    "distilbert/distilbert-base-cased-distilled-squad": "distilbert",
    "deepset/roberta-base-squad2": "roberta-base",
    "deepset/bert-base-cased-squad2": "bert-base",
}


@st.cache_data(max_entries=1, show_spinner=False)
def infill_keys() -> list[str]:
    """Catalog variants that can infill spans: T5 (sentinels) and BART (<mask>)."""
    try:
        variants = catalog.load_catalog().values()
    except ExplorerError:
        return []
    return [v.key for v in variants if v.model_type in spans.T5_TYPES + spans.BART_TYPES]


def status(model: str) -> tuple[bool, str]:
    """(weights ready?, one line saying where they are or how to get them). Never the network."""
    try:
        found = locate(model)
    except ExplorerError as err:
        return False, str(err)
    return found.status == "ready", found.message


def _qa_model(model: str, random_weights: bool):
    """Real weights when present; random mode builds the matching catalog architecture instead."""
    if random_weights:
        return load_model(QA_CHECKPOINTS.get(model, model), "question-answering", random_weights=True)
    return load_model(model, "question-answering")


@st.cache_data(max_entries=32, show_spinner="Generating…")
def infill(model: str, prompt: str, max_new_tokens: int, random_weights: bool) -> tuple[spans.InfillResult, str]:
    """(filled-in prompt from a T5/BART ``model``, device it ran on)."""
    spans.split_blanks(prompt)  # a bad prompt is refused before any model is loaded
    loaded = load_model(model, "seq2seq", random_weights=random_weights)
    return spans.infill(loaded, prompt, max_new_tokens), loaded.device


@st.cache_data(max_entries=32, show_spinner="Reading the context…")
def answer(model: str, question: str, context: str, max_answer_len: int,
           random_weights: bool) -> tuple[spans.QAResult, str]:
    """(best answer span with the start/end probability strip, device it ran on)."""
    spans.check_qa_text(question, context)  # refuse bad input before loading a model
    loaded = _qa_model(model, random_weights)
    return spans.answer(loaded, question, context, max_answer_len), loaded.device
