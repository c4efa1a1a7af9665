"""Cached wrappers of the Evaluate page (the page and its view call these, never the library directly).

A task or a text travels as its bytes (hashable: the same upload is a cache hit). A model is a
:class:`~explorer.serving.backend.Backend`, here or served, asked the same way (keyed by its ``ident``, scheduled as
it needs: :mod:`app.caches.backends`). Its run on a task is made of parts of a few examples, each its own request
and each cached, so the page reports progress between parts (an element updated inside a cached function could not
be replayed) and a part scored once answers from the cache when asked again; the parts stop when their time
together passes one request's budget, and the run says what was cut (the command line scores everything). A text's
perplexity is made the same way, a window a request: its cost is said first (:func:`perplexity_cost`), the windows
that fit one request's time are scored, and asking again continues from the cached ones. Embeddings are made a list
of texts at a time; projections and neighbours are cached apart, so a new seed or method re-projects the same
embeddings. Loaded models live in ``explorer.runtime.loading``'s one process-wide cache, never here.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app.caches.anytime import cache_complete
from app.caches.backends import BY_IDENT, TTL, scheduled
from explorer.core.notices import Notice
from explorer.evaluation import bundled, perplexity, projector, run, taskfile, vectors
from explorer.evaluation.cost import Cost
from explorer.evaluation.result import ModelRun
from explorer.evaluation.scorer import part_size, scorer_of
from explorer.evaluation.task import Task
from explorer.runtime import cancel, workers
from explorer.serving.backend import Backend
from explorer.tasks import defaults

Progress = Callable[[float, str], None] | None
TEXTS_PART = 128  # texts embedded per request


def _budget() -> float:
    """Seconds a model's parts may take together on the page: one request's budget on this device."""
    return cancel.request_budget().seconds


@st.cache_data(max_entries=8, show_spinner=False, ttl=60)
def offered(directory: str | None) -> dict[str, str]:
    """Models the page offers: the bundled decoder, masked LMs, T5/BART, and the lab's (a minute: new ones show)."""
    keys = dict.fromkeys([*defaults.fill_keys(directory), *defaults.infill_keys(directory)])
    labels = {**defaults.lab_models("fill", directory), **defaults.lab_models("infill", directory)}
    return {k: labels.get(k, k) for k in keys}


@st.cache_data(max_entries=32, show_spinner=False)
def task(name: str, data: bytes | None = None) -> Task:
    """A bundled task by name, or an uploaded file's (``name``: its file name) checked line by line."""
    return bundled.task(name) if data is None else taskfile.parse_task(data, name)


@st.cache_data(max_entries=16, show_spinner=False)
def lines(typed: str) -> tuple[str, ...]:
    """Typed texts, one a line, checked (count, length, not binary) as a file's would be."""
    return tuple(taskfile.parse_lines(typed.encode("utf-8"), "the sentences"))


@cache_complete(max_entries=512, ttl=TTL, hash_funcs=BY_IDENT, show_spinner=False)
def run_part(model: Backend, name: str, data: bytes | None, first: int, last: int) -> ModelRun:
    """The model's scores of the examples ``first`` to ``last`` (fewer when this request's budget ends first; keyed
    by the backend's ident: a model here by its ref, whose stamp changes with its weights)."""
    return scheduled(model, lambda: run.score_task(scorer_of(model), task(name, data), first=first, last=last))


def task_run(model: Backend, name: str, data: bytes | None, progress: Progress = None) -> ModelRun:
    """The model's run on the task, part by part with progress (not cached itself: its parts are)."""
    total = len(task(name, data).examples)
    return run.score_in_parts(lambda a, b: run_part(model, name, data, a, b), total, part_size(model), _budget(),
                              progress)


@cache_complete(max_entries=32, ttl=TTL, hash_funcs=BY_IDENT, show_spinner=False)
def perplexity_cost(model: Backend, text_value: str) -> Cost:
    """What the text's perplexity costs (its windows and their seconds), before any window runs."""
    return scheduled(model, lambda: perplexity.estimate(scorer_of(model), text_value))


@cache_complete(max_entries=512, ttl=TTL, hash_funcs=BY_IDENT, show_spinner=False)
def perplexity_part(model: Backend, text_value: str, first: int, last: int) -> perplexity.Perplexity:
    """The windows ``first`` to ``last`` of the text (one a request: a window that would not fit is refused, never
    cached half-done)."""
    return scheduled(model, lambda: perplexity.perplexity(scorer_of(model), text_value, first=first, last=last))


def perplexity_said(plan: Cost) -> Notice:
    """The estimate as the page says it before the work: against the time the page gives one model."""
    return plan.against(_budget())


def text_perplexity(model: Backend, text_value: str, progress: Progress = None) -> perplexity.Perplexity:
    """The text's perplexity, a window a request within one request's time (asking again continues)."""
    plan = perplexity_cost(model, text_value)
    return perplexity.in_parts(lambda a, b: perplexity_part(model, text_value, a, b), plan, text_value, _budget(),
                               progress)


@cache_complete(max_entries=256, ttl=TTL, hash_funcs=BY_IDENT, show_spinner=False)
def vectors_part(model: Backend, texts: tuple[str, ...], layer: int | None, tokens: bool) -> vectors.Vectors:
    return scheduled(model, lambda: vectors.of_model(model, texts, layer, tokens))


def text_vectors(model: Backend, texts: tuple[str, ...], layer: int | None, tokens: bool,
                 progress: Progress = None) -> vectors.Vectors:
    """Sentence embeddings (or one layer's token states) of ``texts``, a list at a time."""
    return vectors.in_parts(lambda part: vectors_part(model, part, layer, tokens), texts, TEXTS_PART, _budget(),
                            model.shown, progress)


@cache_complete(max_entries=32, show_spinner="Laying the points out…")
@workers.queued  # t-SNE and UMAP hold the CPU for seconds: they queue like model work
def layout(vec: vectors.Vectors, method: str, dims: int, seed: int) -> projector.Projection:
    """``vec`` laid out by ``method`` (the vectors are hashed by their contents: the same ones hit the cache)."""
    return projector.project(vec, method, dims, seed)


def neighbours(model: Backend, texts: tuple[str, ...], query: str, layer: int | None, tokens: bool
               ) -> tuple[projector.Neighbour, ...]:
    """The points nearest the typed sentence, its vector made as the points' were (a token's points: the mean of
    the sentence's token states at that layer). Not cached itself: its embeddings are, part by part, so the
    neighbours follow the points as a cut embedding is completed by later runs."""
    query = projector.check_query(query)
    points = text_vectors(model, texts, layer, tokens)
    q = vectors_part(model, (query,), layer, tokens).matrix.mean(axis=0)
    return projector.neighbours(points, q)


def aligned(first: projector.Projection, second: projector.Projection) -> tuple[projector.Projection,
                                                                                projector.Projection]:
    """The second projection turned onto the first (arithmetic on two cached results: not cached itself)."""
    return projector.side_by_side(first, second)
