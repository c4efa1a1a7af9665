"""Cached wrappers of the Evaluate page (the page and its view call these, never the library directly).

A task or a text travels as its bytes (hashable: the same upload is a cache hit); each model's run on it is its own
request with its own budget (``workers.queued`` for a local model, ``workers.remote`` for a served one), so three
models do not share one minute, and a model's run asked again answers from the cache. A run the budget stopped is
cached too (it is a result: the examples scored, and a notice saying how many). Progress callbacks are
underscore arguments (not part of the key). Loaded models live in ``explorer.runtime.loading``'s one process-wide
cache, never here. Vectors and their projections are cached apart, so a new seed or method re-projects the same
embeddings without embedding again.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from explorer.evaluation import bundled, perplexity, projector, run, taskfile, vectors
from explorer.evaluation.result import ModelRun
from explorer.evaluation.scorer import load_task, local_scorer, served_scorer
from explorer.evaluation.task import Task
from explorer.runtime import workers
from explorer.runtime.loading import LoadedModel, load_model
from explorer.runtime.resolve import resolve
from explorer.serving.endpoints import Endpoint
from explorer.tasks import defaults

Progress = Callable[[float, str], None] | None
SERVED_EXAMPLES = 8  # a served column's examples on the page: ~0.6 s a token on llama-cpp-python's CPU engine


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


@st.cache_data(max_entries=16, show_spinner=False)
def text(name: str, data: bytes | None = None) -> str:
    """The bundled perplexity text, or an uploaded one."""
    return bundled.text(name) if data is None else taskfile.parse_text(data, name)


def _loaded(model: str, directory: str | None, device: str, dtype: str, task_name: str | None = None) -> LoadedModel:
    ref = resolve(model, directory)
    return load_model(ref, task_name or load_task(ref), device=device, dtype=dtype, models_dir=directory,
                      purpose="the Evaluate page")


@st.cache_data(max_entries=64, show_spinner=False)
@workers.queued  # model work waits its turn; a cache hit does not
def local_run(model: str, name: str, data: bytes | None, directory: str | None, device: str = "auto",
              dtype: str = "auto", _progress: Progress = None) -> ModelRun:
    """``model``'s run on the task (every example, or those its request's budget allowed)."""
    return run.score_task(local_scorer(_loaded(model, directory, device, dtype)), task(name, data), _progress)


@st.cache_data(max_entries=32, ttl=600, show_spinner=False)
@workers.remote
def served_run(ep: Endpoint, name: str, data: bytes | None, limit: int = SERVED_EXAMPLES,
               _progress: Progress = None) -> ModelRun:
    """The served model's run on the first ``limit`` examples (the engine's echo is slow on a CPU)."""
    return run.score_task(served_scorer(ep), task(name, data).head(limit), _progress)


@st.cache_data(max_entries=32, show_spinner=False)
@workers.queued
def local_perplexity(model: str, text_value: str, directory: str | None, device: str = "auto", dtype: str = "auto",
                     _progress: Progress = None) -> perplexity.Perplexity:
    return perplexity.perplexity(local_scorer(_loaded(model, directory, device, dtype)), text_value,
                                 progress=_progress)


@st.cache_data(max_entries=16, ttl=600, show_spinner=False)
@workers.remote
def served_perplexity(ep: Endpoint, text_value: str, _progress: Progress = None) -> perplexity.Perplexity:
    return perplexity.perplexity(served_scorer(ep), text_value, progress=_progress)


@st.cache_data(max_entries=16, show_spinner=False)
@workers.queued
def local_vectors(model: str, texts: tuple[str, ...], layer: int | None, tokens: bool, directory: str | None,
                  device: str = "auto", dtype: str = "auto", _progress: Progress = None) -> vectors.Vectors:
    """Sentence embeddings (or one layer's token states) of ``texts``."""
    loaded = _loaded(model, directory, device, dtype, load_task(resolve(model, directory)))
    make = vectors.tokens if tokens else vectors.sentences
    return make(loaded, texts, layer, _progress)


@st.cache_data(max_entries=8, ttl=600, show_spinner=False)
@workers.remote
def served_vectors(ep: Endpoint, texts: tuple[str, ...], _progress: Progress = None) -> vectors.Vectors:
    return vectors.served(ep, texts, _progress)


@st.cache_data(max_entries=32, show_spinner=False)
@workers.queued  # t-SNE and UMAP hold the CPU for seconds: they queue like model work
def project(model: str, texts: tuple[str, ...], layer: int | None, tokens: bool, method: str, dims: int, seed: int,
            directory: str | None, device: str = "auto", dtype: str = "auto",
            _progress: Progress = None) -> projector.Projection:
    """``model``'s vectors of ``texts`` laid out by ``method``."""
    vec = local_vectors(model, texts, layer, tokens, directory, device, dtype, _progress)
    return projector.project(vec, method, dims, seed, _progress)


@st.cache_data(max_entries=16, ttl=600, show_spinner=False)
@workers.remote
def served_project(ep: Endpoint, texts: tuple[str, ...], method: str, dims: int, seed: int,
                   _progress: Progress = None) -> projector.Projection:
    """The served model's embeddings of ``texts`` laid out by ``method`` (the layout runs here)."""
    return projector.project(served_vectors(ep, texts, _progress), method, dims, seed, _progress)


@st.cache_data(max_entries=64, show_spinner=False)
@workers.queued
def neighbours(model: str, texts: tuple[str, ...], query: str, layer: int | None, tokens: bool, directory: str | None,
               device: str = "auto", dtype: str = "auto") -> tuple[projector.Neighbour, ...]:
    """The points nearest the typed sentence, its vector made as the points' were."""
    query = projector.check_query(query)
    if tokens:  # token states against a sentence: the sentence's mean state, from the same layer
        q = local_vectors(model, (query,), layer, True, directory, device, dtype).matrix.mean(axis=0)
    else:
        q = local_vectors(model, (query,), layer, False, directory, device, dtype).matrix[0]
    return projector.neighbours(local_vectors(model, texts, layer, tokens, directory, device, dtype), q)


@st.cache_data(max_entries=32, ttl=600, show_spinner=False)
@workers.remote
def served_neighbours(ep: Endpoint, texts: tuple[str, ...], query: str) -> tuple[projector.Neighbour, ...]:
    q = vectors.served(ep, [projector.check_query(query)]).matrix[0]
    return projector.neighbours(served_vectors(ep, texts), q)


def aligned(first: projector.Projection, second: projector.Projection) -> tuple[projector.Projection,
                                                                                projector.Projection]:
    """The second projection turned onto the first (arithmetic on two cached results: not cached itself)."""
    return projector.side_by_side(first, second)
