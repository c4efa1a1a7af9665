"""Sentence embeddings from a served model's ``/v1/embeddings``, and the Similarity page's results from them.

A served model is one more bi-encoder beside the local ones: :func:`similarity` and :func:`search` return the
same :class:`~explorer.tasks.similarity.SimilarityResult` and :class:`~explorer.tasks.similarity.SearchResult`
as the local code (same cleaning of the list, same cosine on unit vectors, same rounding), and their
``device`` / ``device_name`` / ``dtype`` say where they ran (:func:`~explorer.serving.probe.served_on`).

The engine pools the tokens as it is configured to (a pooling model's own rule; a decoder served with pooling
``none`` sends one vector per token, which :func:`~explorer.serving.client.embeddings` averages). Texts go
:data:`BATCH` per request, except where the server is seen to get batches wrong: llama-cpp-python 0.3.36 serving
a model with pooling ``none`` (the bundled Gemma) reads every input after the first at the wrong offset in its
``Llama.embed`` (it advances by tokens where it should advance by tokens x width), so the same text twice in one
request comes back as two unrelated vectors (measured cosine -0.01). :func:`batch_size` asks each endpoint
once with the same text twice and falls back to one text per request (several in flight) when the two differ.

Inputs are checked before any request: an empty list, an empty or NUL-holding text, a text past
:data:`SERVED_EMBEDDING_TEXT_CHARS` (engines cut long inputs to their own limit, llama-cpp-python silently at its
``n_batch``) each get one ExplorerError.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import SERVED_EMBEDDING_TEXT_CHARS, SERVED_EMBEDDING_TOTAL_CHARS
from explorer.core.notices import Notice
from explorer.runtime import cancel
from explorer.serving import client
from explorer.serving.client import ServedError
from explorer.serving.endpoints import Endpoint
from explorer.serving.probe import REPROBE_AFTER, Capabilities, require, served_on
from explorer.tasks import similarity as local
from explorer.tasks.similarity import MAX_SENTENCES, SearchResult, SimilarityResult

__all__ = ["BATCH", "batch_size", "check_texts", "embed", "search", "similarity"]

BATCH = 32  # texts per request where the server batches correctly
SAME = 0.999  # cosine of one text embedded twice in one request, at least, for a server that batches right
CHECK_TEXT = "A man is eating food."

_BATCHES: dict[tuple[str, str, str], tuple[float, int]] = {}
_LOCK = threading.Lock()


def check_texts(texts: object) -> list[str]:
    """The texts, or one ExplorerError before any request: not a list of strings, empty, a blank text, a NUL,
    a text past :data:`SERVED_EMBEDDING_TEXT_CHARS`, more than :data:`MAX_SENTENCES` + 1 texts or
    :data:`SERVED_EMBEDDING_TOTAL_CHARS` in all."""
    if isinstance(texts, str) or not isinstance(texts, list | tuple):
        raise ExplorerError("Give the texts to embed as a list of strings, one per sentence.")
    if not texts:
        raise ExplorerError("No texts to embed: give at least one sentence.")
    if len(texts) > MAX_SENTENCES + 1:
        raise ExplorerError(f"{len(texts)} texts given; a served model embeds {MAX_SENTENCES + 1} at most per call.")
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise ExplorerError(f"Text {i + 1} is empty (or not text): every line must hold a sentence.")
        if "\x00" in text:
            raise ExplorerError(f"Text {i + 1} holds a NUL character, which no engine reads: remove it.")
        if len(text) > SERVED_EMBEDDING_TEXT_CHARS:
            raise ExplorerError(f"Text {i + 1} has {len(text):,} characters; a served model embeds "
                                f"{SERVED_EMBEDDING_TEXT_CHARS:,} at most per text from this explorer "
                                f"({shorten(text, 40)!r}): shorten it.")
    if (total := sum(len(t) for t in texts)) > SERVED_EMBEDDING_TOTAL_CHARS:
        raise ExplorerError(f"The texts hold {total:,} characters in all; the limit is "
                            f"{SERVED_EMBEDDING_TOTAL_CHARS:,}: embed "
                            "fewer or shorter ones.")
    return list(texts)


def _cosine(a: list[float], b: list[float]) -> float:
    norms = math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norms if norms else 0.0


def batch_size(ep: Endpoint, wanted: int = BATCH) -> int:
    """``wanted``, or 1 where the server embeds a batch wrongly (checked once per endpoint, for
    :data:`~explorer.serving.probe.REPROBE_AFTER` seconds: the same text twice in one request must agree)."""
    key = (ep.name, ep.base_url, ep.model)
    with _LOCK:
        hit = _BATCHES.get(key)
    if hit is None or time.monotonic() - hit[0] >= REPROBE_AFTER:
        first, second = client.embeddings(ep, [CHECK_TEXT, CHECK_TEXT])
        hit = (time.monotonic(), BATCH if _cosine(first, second) >= SAME else 1)
        with _LOCK:
            _BATCHES[key] = hit
    return max(1, min(wanted, hit[1]))


@dataclass(frozen=True)
class _Embedded:
    """Unit vectors of the texts embedded in time, which texts they are, and how it went."""

    vectors: torch.Tensor  # (N_done, D) float64, unit rows
    kept: tuple[int, ...]  # the positions in the texts given of those rows
    caps: Capabilities
    notices: tuple[Notice, ...]
    seconds: float
    stopped: cancel.RequestStopped | None  # the request's time ran out before every text was embedded


def _requests(ep: Endpoint, chunks: list[list[str]]) -> tuple[list[list[float] | None], cancel.RequestStopped | None]:
    """Each text's vector (None: its chunk was not answered in time), in order; chunks in parallel up to the
    endpoint's own bound (each thread in this request's context, so its budget applies there too)."""
    answered, stopped = client.parallel_anytime(ep, lambda chunk: client.embeddings(ep, chunk), chunks)
    out: list[list[float] | None] = []
    for chunk, vectors in zip(chunks, answered, strict=True):
        out += vectors if vectors is not None else [None] * len(chunk)
    return out, stopped


def _embed(ep: Endpoint, texts: Sequence[str], batch: int) -> _Embedded:
    """The texts embedded by ``ep`` (those answered before the request's time ran out)."""
    texts = check_texts(texts)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ExplorerError(f"The batch size must be a whole number of at least 1 (got {shorten(batch)!r}).")
    caps = require(ep, "embeddings", "sentence embeddings")
    size = batch_size(ep, batch)
    began = time.perf_counter()
    found, stopped = _requests(ep, [texts[i:i + size] for i in range(0, len(texts), size)])
    kept = tuple(i for i, v in enumerate(found) if v is not None)
    if not kept and stopped is not None:
        raise stopped
    vectors = [v for v in found if v is not None]
    if len({len(v) for v in vectors}) != 1:
        raise ServedError(f"{ep.shown} answered embeddings of different sizes for one list.", "garbage")
    out = torch.tensor(vectors, dtype=torch.float64)  # (N_done, D)
    if not torch.isfinite(out).all():
        raise ServedError(f"{ep.shown} answered an embedding holding NaN or infinity.", "garbage")
    zero = (out.norm(dim=1) == 0).nonzero().flatten().tolist()
    if zero:
        raise ServedError(f"{ep.shown} answered a zero vector for text {kept[zero[0]] + 1}: it has no direction to "
                          "compare.", "garbage")
    notices: tuple[Notice, ...] = ()
    if size < batch and len(texts) > 1:
        notices = (Notice("info", f"{ep.shown} embeds a batch wrongly (one text twice in one request gave two "
                                  "different vectors), so each text went in a request of its own."),)
    return _Embedded(F.normalize(out, p=2, dim=1), kept, caps, notices, round(time.perf_counter() - began, 4),
                     stopped)


def embed(ep: Endpoint, texts: Sequence[str], batch: int = BATCH) -> torch.Tensor:
    """Unit sentence embeddings from ``ep``, in the order given: (N, D) float64 on the CPU (all of them: a request
    whose time runs out is stopped)."""
    done = _embed(ep, texts, batch)
    if done.stopped is not None:
        raise done.stopped
    return done.vectors


def _cut(stopped: cancel.RequestStopped, done: int, total: int, what: str) -> Notice:
    return Notice("stopped", f"{stopped} Embedded in time: {done} of {total} {what}; the others are left out.")


def _rows(matrix: torch.Tensor) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(round(float(v), 6) for v in row) for row in matrix.tolist())


def similarity(ep: Endpoint, lines: list[str] | str, batch: int = BATCH, key: str | None = None) -> SimilarityResult:
    """The cosine matrix of the lines (cleaned as the local bi-encoder cleans them), embedded by ``ep``. Anytime:
    when the request's time runs out, the matrix of the sentences embedded so far, and a notice."""
    clean = local.clean_sentences(lines)
    done = _embed(ep, clean.sentences, batch)
    sentences = tuple(clean.sentences[i] for i in done.kept)
    cut = (_cut(done.stopped, len(sentences), len(clean.sentences), "sentences"),) if done.stopped else ()
    return SimilarityResult(key or ep.key, sentences, _rows(local.cosine_matrix(done.vectors)),
                            int(done.vectors.shape[1]), False, clean.notices + done.notices + cut, done.seconds,
                            **served_on(ep, done.caps))


def search(ep: Endpoint, query: str, lines: list[str] | str, top_k: int | None = None,
           key: str | None = None) -> SearchResult:
    """The lines ranked by cosine similarity to ``query`` (best first), embedded by ``ep`` (all of them: a ranking
    of some lines would read as a ranking of all, so a request whose time runs out is stopped)."""
    q = local.tidy(query)
    if not q:
        raise ExplorerError("The query is empty: type a sentence to search for.")
    if len(q) > SERVED_EMBEDDING_TEXT_CHARS:
        raise ExplorerError(f"The query is {len(q):,} characters long; a served model embeds "
                            f"{SERVED_EMBEDDING_TEXT_CHARS:,} at "
                            "most per text from this explorer: shorten it.")
    clean = local.clean_sentences(lines)
    check_texts(clean.sentences)  # numbered as the list's lines (the query goes first in the request)
    done = _embed(ep, [q, *clean.sentences], BATCH)
    if done.stopped is not None:
        raise done.stopped
    scores = local.cosine_matrix(done.vectors[:1], done.vectors[1:])[0]  # (N,)
    order = torch.argsort(scores, descending=True, stable=True).tolist()[: top_k or len(clean.sentences)]
    hits = tuple(local.SearchHit(r + 1, i, clean.sentences[i], round(float(scores[i]), 6)) for r, i in enumerate(order))
    return SearchResult(key or ep.key, q, hits, False, done.seconds, **served_on(ep, done.caps))
