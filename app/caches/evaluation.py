"""Cached wrappers of the Evaluate page (the page and its view call these, never the library directly).

A task or a text travels as its bytes (hashable: the same upload is a cache hit). A model's run on a task is made of
parts of a few examples, each its own request (``workers.queued`` for a local model, ``workers.remote`` for a served
one) and each cached, so the page reports progress between parts (an element updated inside a cached function
could not be replayed) and a part scored once answers from the cache when asked again; the parts stop when their
time together passes one request's budget, and the run says what was cut (the command line scores everything).
A text's perplexity is made the same way, a window a request: its cost is said first (:func:`local_perplexity_cost`),
the windows that fit one request's time are scored, and asking again continues from the cached ones. Embeddings are
made a list of texts at a time; projections and neighbours are cached apart, so a new seed or method re-projects
the same embeddings. Loaded models live in ``explorer.runtime.loading``'s one
process-wide cache, never here.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app.caches.anytime import cache_complete
from explorer.core.notices import Notice
from explorer.evaluation import bundled, perplexity, projector, run, taskfile, vectors
from explorer.evaluation.cost import Cost
from explorer.evaluation.result import ModelRun
from explorer.evaluation.scorer import load_task, local_scorer, served_scorer
from explorer.evaluation.task import Task
from explorer.runtime import cancel, workers
from explorer.runtime.loading import LoadedModel, load_model
from explorer.runtime.resolve import ModelRef
from explorer.serving.endpoints import Endpoint
from explorer.tasks import defaults

Progress = Callable[[float, str], None] | None
LOCAL_PART = 8  # examples per request of a local model (a few seconds of Gemma 3 270M on 2 cores)
SERVED_PART = 2  # a served model's: one request per choice, ~0.6 s a token on a CPU engine
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


def _loaded(ref: ModelRef, device: str, dtype: str, states: bool = False) -> LoadedModel:
    """The model loaded to score text (``states``: to give its hidden states: a decoder as a causal LM, shared
    with its scoring, any other model bare)."""
    return load_model(ref, ref.task("base") if states else load_task(ref), device=device, dtype=dtype,
                      purpose="the Evaluate page")


@cache_complete(max_entries=512, show_spinner=False)
@workers.queued  # model work waits its turn; a cache hit does not
def local_part(ref: ModelRef, name: str, data: bytes | None, first: int, last: int, device: str = "auto",
               dtype: str = "auto") -> ModelRun:
    """The model's scores of the examples ``first`` to ``last`` (fewer when this request's budget ends first; keyed
    by the ref, whose stamp changes with its weights)."""
    scorer = local_scorer(_loaded(ref, device, dtype))
    return run.score_task(scorer, task(name, data), first=first, last=last)


@cache_complete(max_entries=256, ttl=600, show_spinner=False)
@workers.remote
def served_part(ep: Endpoint, name: str, data: bytes | None, first: int, last: int) -> ModelRun:
    return run.score_task(served_scorer(ep), task(name, data), first=first, last=last)


def local_run(ref: ModelRef, name: str, data: bytes | None, device: str, dtype: str,
              progress: Progress = None) -> ModelRun:
    """The model's run on the task, part by part with progress (not cached itself: its parts are)."""
    total = len(task(name, data).examples)
    return run.score_in_parts(lambda a, b: local_part(ref, name, data, a, b, device, dtype), total,
                              LOCAL_PART, _budget(), progress)


def served_run(ep: Endpoint, name: str, data: bytes | None, progress: Progress = None) -> ModelRun:
    total = len(task(name, data).examples)
    return run.score_in_parts(lambda a, b: served_part(ep, name, data, a, b), total, SERVED_PART, _budget(),
                              progress)


@cache_complete(max_entries=32, show_spinner=False)
@workers.queued
def local_perplexity_cost(ref: ModelRef, text_value: str, device: str = "auto", dtype: str = "auto") -> Cost:
    """What the text's perplexity costs (its windows and their seconds), before any window runs."""
    return perplexity.estimate(local_scorer(_loaded(ref, device, dtype)), text_value)


@cache_complete(max_entries=512, show_spinner=False)
@workers.queued
def local_perplexity_part(ref: ModelRef, text_value: str, first: int, last: int, device: str = "auto",
                          dtype: str = "auto") -> perplexity.Perplexity:
    """The windows ``first`` to ``last`` of the text (one a request: a window that would not fit is refused, never
    cached half-done)."""
    return perplexity.perplexity(local_scorer(_loaded(ref, device, dtype)), text_value, first=first, last=last)


def perplexity_said(plan: Cost) -> Notice:
    """The estimate as the page says it before the work: against the time the page gives one model."""
    return plan.against(_budget())


def local_perplexity(ref: ModelRef, text_value: str, device: str = "auto", dtype: str = "auto",
                     progress: Progress = None) -> perplexity.Perplexity:
    """The text's perplexity, a window a request within one request's time (asking again continues)."""
    plan = local_perplexity_cost(ref, text_value, device, dtype)
    return perplexity.in_parts(lambda a, b: local_perplexity_part(ref, text_value, a, b, device, dtype), plan,
                               text_value, _budget(), progress)


@cache_complete(max_entries=16, ttl=600, show_spinner=False)
@workers.remote
def served_perplexity_cost(ep: Endpoint, text_value: str) -> Cost:
    return perplexity.estimate(served_scorer(ep), text_value)


@cache_complete(max_entries=256, ttl=600, show_spinner=False)
@workers.remote
def served_perplexity_part(ep: Endpoint, text_value: str, first: int, last: int) -> perplexity.Perplexity:
    return perplexity.perplexity(served_scorer(ep), text_value, first=first, last=last)


def served_perplexity(ep: Endpoint, text_value: str, progress: Progress = None) -> perplexity.Perplexity:
    plan = served_perplexity_cost(ep, text_value)
    return perplexity.in_parts(lambda a, b: served_perplexity_part(ep, text_value, a, b), plan, text_value,
                               _budget(), progress)


@cache_complete(max_entries=256, show_spinner=False)
@workers.queued
def local_vectors_part(ref: ModelRef, texts: tuple[str, ...], layer: int | None, tokens: bool,
                       device: str = "auto", dtype: str = "auto") -> vectors.Vectors:
    loaded = _loaded(ref, device, dtype, states=True)
    return (vectors.tokens if tokens else vectors.sentences)(loaded, texts, layer)


@cache_complete(max_entries=64, ttl=600, show_spinner=False)
@workers.remote
def served_vectors_part(ep: Endpoint, texts: tuple[str, ...]) -> vectors.Vectors:
    return vectors.served(ep, texts)


def local_vectors(ref: ModelRef, texts: tuple[str, ...], layer: int | None, tokens: bool,
                  device: str, dtype: str, progress: Progress = None) -> vectors.Vectors:
    """Sentence embeddings (or one layer's token states) of ``texts``, a list at a time."""
    return vectors.in_parts(lambda part: local_vectors_part(ref, part, layer, tokens, device, dtype), texts,
                            TEXTS_PART, _budget(), ref.spec, progress)


def served_vectors(ep: Endpoint, texts: tuple[str, ...], progress: Progress = None) -> vectors.Vectors:
    return vectors.in_parts(lambda part: served_vectors_part(ep, part), texts, TEXTS_PART, _budget(), ep.shown,
                            progress)


@cache_complete(max_entries=32, show_spinner="Laying the points out…")
@workers.queued  # t-SNE and UMAP hold the CPU for seconds: they queue like model work
def layout(vec: vectors.Vectors, method: str, dims: int, seed: int) -> projector.Projection:
    """``vec`` laid out by ``method`` (the vectors are hashed by their contents: the same ones hit the cache)."""
    return projector.project(vec, method, dims, seed)


def neighbours(ref: ModelRef, texts: tuple[str, ...], query: str, layer: int | None, tokens: bool,
               device: str = "auto", dtype: str = "auto") -> tuple[projector.Neighbour, ...]:
    """The points nearest the typed sentence, its vector made as the points' were (a token's points: the mean of
    the sentence's token states at that layer). Not cached itself: its embeddings are, part by part, so the
    neighbours follow the points as a cut embedding is completed by later runs."""
    query = projector.check_query(query)
    points = local_vectors(ref, texts, layer, tokens, device, dtype)
    q = local_vectors_part(ref, (query,), layer, tokens, device, dtype).matrix.mean(axis=0)
    return projector.neighbours(points, q)


def served_neighbours(ep: Endpoint, texts: tuple[str, ...], query: str) -> tuple[projector.Neighbour, ...]:
    q = served_vectors_part(ep, (projector.check_query(query),)).matrix[0]
    return projector.neighbours(served_vectors(ep, texts), q)


def aligned(first: projector.Projection, second: projector.Projection) -> tuple[projector.Projection,
                                                                                projector.Projection]:
    """The second projection turned onto the first (arithmetic on two cached results: not cached itself)."""
    return projector.side_by_side(first, second)
