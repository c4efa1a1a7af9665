"""Cached wrappers of the similarity area (the page calls these, never the library directly).

Models are NOT wrapped in ``st.cache_resource`` here: ``explorer.runtime.loading.load_model`` already keeps
one process-wide, memory-bounded LRU cache shared by every session, and holding a second reference
here would stop that cache from ever freeing memory. ``device``/``dtype`` (the sidebar's choice,
:mod:`app.views.device_picker`) are arguments, so they are part of every cache key. Which checkpoint serves
ColBERT is the library's decision (``colbert.encoder_ref``), made by the page once per run: the ref is part of the
key, so a ColBERT checkpoint downloaded later is asked afresh instead of answered with the stand-in's results.
Results are ``st.cache_data`` (small frozen dataclasses, hashable arguments, bounded). ExplorerErrors are not
cached: they reach ``ui.guard``.

The bi-encoder's matrix and search take a :class:`~explorer.serving.backend.Backend`, in this process or served
(``/v1/embeddings``), asked the same way: keyed by its ``ident`` with a ``ttl`` (a server can change under us), run
as it needs (:mod:`app.caches.backends`).
"""

from __future__ import annotations

import streamlit as st

from app.caches.anytime import cache_complete
from app.caches.backends import BY_IDENT, TTL, scheduled
from explorer.runtime import workers
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import ModelRef
from explorer.serving.backend import Backend
from explorer.tasks import colbert, defaults, sbert, similarity


@st.cache_data(max_entries=2, show_spinner=False, ttl=60)
def lab_encoders() -> dict[str, str]:
    """The pretraining lab's encoders in the models folder (``lab/NAME`` -> label; a minute: new ones appear)."""
    return defaults.lab_models("encoder")


@st.cache_data(max_entries=4, show_spinner=False, ttl=600)
def sentence_limit(device: str = "auto") -> int:
    """How many sentences the page takes on ``device``: what its slowest request embeds within one request's time
    budget (:func:`explorer.tasks.similarity.page_limit`)."""
    from explorer.runtime import cancel
    from explorer.runtime.placement import resolve_device

    return similarity.page_limit(cancel.request_budget().seconds, resolve_device(device) != "cpu")


@st.cache_data(max_entries=32, show_spinner=False)
def clean_lines(text: str, limit: int = similarity.MAX_SENTENCES) -> similarity.SentenceList:
    """The sentences that will be embedded, and notices about dropped lines (raises on a bad list, or one longer
    than ``limit``)."""
    why = (f" on this page (what one request embeds within this server's time budget; the command line takes up to "
           f"{similarity.MAX_SENTENCES})") if limit < similarity.MAX_SENTENCES else ""
    return similarity.clean_sentences(text, limit, why)


def _matrix(model: Backend, text: str) -> similarity.SimilarityResult:
    return model.similarity(text)


def _search(model: Backend, query: str, text: str) -> similarity.SearchResult:
    return model.search(query, text)


@st.cache_data(max_entries=32, ttl=TTL, hash_funcs=BY_IDENT, show_spinner="Embedding the sentences…")
def matrix(model: Backend, text: str) -> similarity.SimilarityResult:
    """Cosine matrix of the lines of ``text`` embedded by ``model`` (a bi-encoder here, or a served model)."""
    return scheduled(model, _matrix, model, text)


@st.cache_data(max_entries=32, ttl=TTL, hash_funcs=BY_IDENT, show_spinner="Ranking the sentences…")
def search(model: Backend, query: str, text: str) -> similarity.SearchResult:
    """The lines of ``text`` ranked by cosine similarity to ``query``."""
    return scheduled(model, _search, model, query, text)


@cache_complete(max_entries=16, show_spinner="Late interaction: encoding every token…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def late_ranking(encoder: ModelRef, bi_encoder: ModelRef, query: str, text: str, device: str = "auto",
                 dtype: str = "auto") -> colbert.Ranking:
    """MaxSim ranking of the lines of ``text`` with ``encoder`` (:func:`explorer.tasks.colbert.encoder_ref`) next
    to ``bi_encoder``'s ranking."""
    return colbert.rank(colbert.load_encoder(encoder, device=device, dtype=dtype),
                        load_model(bi_encoder, device=device, dtype=dtype), query, text)


@cache_complete(max_entries=32, show_spinner="Token by token similarity…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def maxsim(encoder: ModelRef, query: str, doc: str, device: str = "auto", dtype: str = "auto") -> colbert.MaxSim:
    """MaxSim of the query against one document, token by token."""
    return colbert.maxsim_texts(colbert.load_encoder(encoder, device=device, dtype=dtype), query, doc)


@cache_complete(max_entries=16, show_spinner="Clustering token vectors and compressing…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def compression(encoder: ModelRef, query: str, text: str, k: int, seed: int, top_k: int, device: str = "auto",
                dtype: str = "auto") -> colbert.CompressionStudy:
    """ColBERTv2 compression study with 1- and 2-bit residuals (k = 0: the default number of centroids)."""
    return colbert.compression_study(colbert.load_encoder(encoder, device=device, dtype=dtype), query, text, (1, 2),
                                     k or None, seed, top_k)


@cache_complete(max_entries=8, show_spinner="Embedding the graded pairs with every pooling…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def pooling_study(model: ModelRef, device: str = "auto", dtype: str = "auto") -> list[sbert.PoolingRow]:
    """CLS, mean and max pooling of ``model`` on the bundled graded pairs, with each one's Spearman."""
    return sbert.pooling_study(load_model(model, device=device, dtype=dtype))


@cache_complete(max_entries=32, show_spinner="Computing Sentence-BERT's three objectives…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def objectives(model: ModelRef, anchor: str, positive: str, negative: str, label: str, gold: float,
               device: str = "auto", dtype: str = "auto") -> sbert.Objectives:
    """The classification, regression and triplet losses on real embeddings of three typed sentences."""
    return sbert.objectives(load_model(model, device=device, dtype=dtype), anchor, positive, negative, label, gold)
