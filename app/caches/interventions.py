"""Cached wrappers of the Interventions page (the only Streamlit caching of this area).

Models are cached process-wide by the loader, and each one's nnsight engine by :mod:`explorer.interventions.engine`
(a view of the shared model, never the model itself); here only results are cached, keyed by plain hashable
requests: the model as a :class:`~explorer.runtime.resolve.ModelRef` the page resolved once (its stamp follows
the weights on disk, so new weights are a new key). Model work queues for a worker and runs under the request's
budget (``workers.queued``). A patching grid reports progress while it runs, so it is kept in a small store of the
server's own instead (:func:`patch`). The NDIF request is not cached (a network call a visitor asks for on purpose)
and runs under a request budget without a local model slot.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple

import streamlit as st

from app.caches.anytime import cache_complete
from explorer.interventions import ablation, across, components, models, patching, ranking, remote, steering
from explorer.interventions.grid import PatchGrid
from explorer.runtime import workers
from explorer.runtime.resolve import ModelRef

Progress = Callable[[float, str], None]
GRIDS_KEPT = 16  # patching grids the server keeps (a few KB each): switching sites back and forth costs nothing


class Target(NamedTuple):
    """A model (resolved by the page: untrained or not, which models folder) and where it runs: part of every key
    below."""

    ref: ModelRef
    device: str = "auto"
    dtype: str = "auto"

    def load_kwargs(self) -> dict[str, str]:
        return {"device": self.device, "dtype": self.dtype}


class PairReq(NamedTuple):
    clean: str
    corrupt: str
    target: str
    foil: str


@st.cache_data(max_entries=4, ttl=60, show_spinner=False)
def options(random_weights: bool, models_dir: str | None) -> list[tuple[str, str]]:
    """The models offered; re-read every minute so downloads and Lab runs appear."""
    return models.options(random_weights, models_dir)


@workers.queued
def _patch(where: Target, pair: PairReq, site: str, metric: str, progress: Progress | None) -> PatchGrid:
    return patching.patch(where.ref, *pair, site=site, metric=metric, progress=progress, **where.load_kwargs())


class _Grids:
    """The last :data:`GRIDS_KEPT` whole grids, shared by every session of the server (a grid is frozen, and its key
    holds the model's :class:`ModelRef`, whose stamp follows the weights on disk)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.kept: OrderedDict[tuple[object, ...], PatchGrid] = OrderedDict()

    def get(self, key: tuple[object, ...]) -> PatchGrid | None:
        with self.lock:
            if key in self.kept:
                self.kept.move_to_end(key)
            return self.kept.get(key)

    def put(self, key: tuple[object, ...], grid: PatchGrid) -> None:
        with self.lock:
            self.kept[key] = grid
            while len(self.kept) > GRIDS_KEPT:
                self.kept.popitem(last=False)


@st.cache_resource(show_spinner=False)
def _grids() -> _Grids:
    return _Grids()  # a resource: "Free memory" (st.cache_resource.clear()) empties it with the other caches


def patch(where: Target, pair: PairReq, site: str, metric: str, progress: Progress | None = None) -> PatchGrid:
    """A patching grid (:func:`explorer.interventions.patching.patch`), kept among the server's last
    :data:`GRIDS_KEPT`, so the page's default grid is computed once for all its visitors (15-20 s of Gemma 3 270M on
    two CPU cores). Not ``st.cache_data``: a grid reports progress to the page while it runs, and that cache replays
    the elements a function drew (the progress bar lives outside it). A grid a stopped request left partial is not
    kept: asking again computes it whole."""
    store, key = _grids(), (where, pair, site, metric)
    if (grid := store.get(key)) is not None:
        return grid
    grid = _patch(where, pair, site, metric, progress)
    if grid.plan is None or grid.cells_done == grid.plan.cells:
        store.put(key, grid)
    return grid


@cache_complete(max_entries=16, show_spinner=False)
@workers.queued
def ablate(where: Target, text: str, kind: str, spec: str, mode: str, target: str):
    """One ablation (:func:`explorer.interventions.ablation.ablate`)."""
    return ablation.ablate(where.ref, text, components.parse(kind, spec), mode=mode, target=target or None,
                           **where.load_kwargs())


@cache_complete(max_entries=4, show_spinner=False)
@workers.queued
def rank(where: Target, text: str, target: str, foil: str, mode: str):
    """Every head by ablation effect, beside its gradient importance."""
    loaded = models.load(where.ref, **where.load_kwargs())
    return ranking.rank_heads(loaded, text, target or None, foil or None, mode=mode)


@cache_complete(max_entries=8, show_spinner=False)
@workers.queued
def steer(where: Target, text: str, positive: tuple[str, ...], negative: tuple[str, ...], layer: int,
          coefficient: float, max_new_tokens: int, strategy: str, seed: int):
    """Generations with and without a steering vector (:func:`explorer.interventions.steering.steer`)."""
    return steering.steer(where.ref, text, positive, negative, layer=layer, coefficient=coefficient,
                          max_new_tokens=max_new_tokens, strategy=strategy, seed=seed, **where.load_kwargs())


@cache_complete(max_entries=4, show_spinner=False)
@workers.queued
def side_by_side(refs: tuple[ModelRef, ...], pair: PairReq, site: str, metric: str, device: str, dtype: str):
    """The same grid for several models, resolved by the page (:func:`explorer.interventions.across.across`)."""
    return across.across(refs, *pair, site=site, metric=metric, device=device, dtype=dtype)


@workers.remote
def on_ndif(repo: str, pair: PairReq, key: str):
    """The residual grid of a model NDIF hosts (:func:`explorer.interventions.remote.remote_patch`)."""
    return remote.remote_patch(repo, *pair, key=key)
