"""Cached wrappers of the similarity area (the page calls these, never the library directly).

Models are NOT wrapped in ``st.cache_resource`` here: ``explorer.loading.load_model`` already keeps
one process-wide, memory-bounded LRU cache shared by every session, and holding a second reference
here would stop that cache from ever freeing memory. Results are ``st.cache_data`` (small frozen
dataclasses, hashable arguments, bounded). ExplorerErrors are not cached: they reach ``ui.guard``.
"""

from __future__ import annotations

import streamlit as st

from explorer import colbert, similarity
from explorer.errors import ExplorerError
from explorer.loading import load_model
from explorer.weights import locate

BI_ENCODER = "sentence-bert"  # the bundled all-MiniLM-L6-v2
COLBERT_KEYS = ("colbertv2", "colbert")  # catalog keys a ColBERT checkpoint may be filed under


def colbert_key() -> str | None:
    """The first ColBERT key whose weights are on disk AND carry the 128-d projection, else None.

    The projection is checked before loading: "colbert" may resolve to plain bert-base weights
    (its reference checkpoint), which have no projection and would be a useless 440 MB load.
    """
    for key in COLBERT_KEYS:
        try:
            status = locate(key)
        except ExplorerError:  # not a catalog key in this installation
            continue
        if status.status == "ready" and colbert.read_projection(status.path) is not None:
            return key
    return None


def _encoder() -> colbert.TokenEncoder:
    """ColBERT checkpoint when present, else the labelled stand-in (bundled MiniLM token vectors)."""
    key = colbert_key()
    return colbert.make_encoder(load_model(key or BI_ENCODER))


@st.cache_data(max_entries=32, show_spinner=False)
def clean_lines(text: str) -> similarity.SentenceList:
    """The sentences that will be embedded, and notices about dropped lines (raises on a bad list)."""
    return similarity.clean_sentences(text)


@st.cache_data(max_entries=32, show_spinner="Embedding the sentences…")
def matrix(model: str, text: str) -> similarity.SimilarityResult:
    """Cosine matrix of the lines of ``text`` with bi-encoder ``model`` (key or directory)."""
    return similarity.similarity(load_model(model), text)


@st.cache_data(max_entries=32, show_spinner="Ranking the sentences…")
def search(model: str, query: str, text: str) -> similarity.SearchResult:
    """The lines of ``text`` ranked by cosine similarity to ``query``."""
    return similarity.search(load_model(model), query, text)


@st.cache_data(max_entries=16, show_spinner="Late interaction: encoding every token…")
def late_ranking(query: str, text: str) -> colbert.Ranking:
    """MaxSim ranking of the lines of ``text`` next to the bi-encoder's ranking."""
    return colbert.rank(_encoder(), load_model(BI_ENCODER), query, text)


@st.cache_data(max_entries=32, show_spinner="Token by token similarity…")
def maxsim(query: str, doc: str) -> tuple[colbert.MaxSim, str, bool]:
    """(MaxSim of query vs one document, encoder label, is it the stand-in)."""
    enc = _encoder()
    m = colbert.maxsim(colbert.encode_tokens(enc, query, "query"), colbert.encode_tokens(enc, doc, "document"))
    return m, enc.label, enc.stand_in


@st.cache_data(max_entries=16, show_spinner="Clustering token vectors and compressing…")
def compression(query: str, text: str, k: int, seed: int, top_k: int) -> colbert.CompressionStudy:
    """ColBERTv2 compression study with 1- and 2-bit residuals (k = 0: the default number of centroids)."""
    return colbert.compression_study(_encoder(), query, text, (1, 2), k or None, seed, top_k)
