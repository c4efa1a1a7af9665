"""Vectors laid out in 2-D or 3-D: PCA (here, equal to scikit-learn's up to sign), t-SNE (scikit-learn) or UMAP
(umap-learn), every one seeded so that one seed gives the same picture every time.

* PCA: the centred matrix's singular vectors, each signed so that its largest entry is positive (a rule of its
  own, so the picture does not flip between runs); the share of variance each axis explains is kept.
* t-SNE (van der Maaten & Hinton 2008) and UMAP (McInnes et al. 2018) read the vectors reduced to
  :data:`PRE_PCA` dimensions by the PCA above first, as both papers advise for wide embeddings: the neighbour
  search on 2,000 x 384 values is most of their time. Perplexity (t-SNE) and neighbours (UMAP) shrink for small
  sets, which would otherwise be refused.

scikit-learn and umap-learn are imported when their method is asked for. umap-learn compiles its functions with
numba the first time they run in a process, and caches few of them: on 2 CPU cores that is 30-90 s before the first
layout, every process, past a page's time budget. :func:`_umap_module` turns numba's on-disk cache on for all of them
(in the explorer's cache folder unless ``NUMBA_CACHE_DIR`` says where), so they compile once per machine and later
processes load them in about a second.

>>> import numpy as np
>>> x = np.array([[2.0, 0.0], [0.0, 1.0], [-2.0, 0.0], [0.0, -1.0]])
>>> points, explained = pca(x, 1)
>>> points[:, 0].round(3).tolist(), explained.round(3).tolist()
([2.0, 0.0, -2.0, 0.0], [0.8])
"""

from __future__ import annotations

import contextlib
import importlib
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from explorer.core import persist
from explorer.core.errors import ExplorerError
from explorer.runtime import cancel

__all__ = ["METHODS", "MIN_POINTS", "PRE_PCA", "Layout", "pca", "project"]

METHODS = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP"}
PRE_PCA = 50  # dimensions t-SNE and UMAP read (van der Maaten 2014 reduces to 50 before t-SNE)
MIN_POINTS = 5  # t-SNE and UMAP need some neighbours; PCA needs two points
TSNE_ITERATIONS = 500  # scikit-learn's default is 1,000; the layout settles by 500 on sentence embeddings
Progress = Callable[[float, str], None]
_UMAP_CACHED: list[bool] = []  # numba's cache turned on for umap-learn in this process (once)


@dataclass(frozen=True)
class Layout:
    """Points (N, dims) and how they were made."""

    method: str  # "pca", "tsne" or "umap"
    dims: int
    seed: int
    points: np.ndarray  # (N, dims) float64
    explained: tuple[float, ...]  # PCA: share of the variance on each axis; t-SNE/UMAP: ()
    how: str
    seconds: float = 0.0


def pca(matrix: np.ndarray, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """(points (N, dims), explained variance ratio (dims,)): the centred matrix on its top singular vectors."""
    x = np.asarray(matrix, dtype=np.float64)
    centred = x - x.mean(axis=0)
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)  # vt: (min(N, D), D)
    top = vt[:dims]
    signs = np.sign(top[np.arange(top.shape[0]), np.abs(top).argmax(axis=1)])  # largest entry positive
    top = top * np.where(signs == 0, 1.0, signs)[:, None]
    variance = singular**2
    total = variance.sum()
    return centred @ top.T, variance[:dims] / total if total > 0 else np.zeros(dims)


def _check(matrix: np.ndarray, method: str, dims: int) -> np.ndarray:
    if method not in METHODS:
        raise ExplorerError(f"Unknown projection {method!r}: pick one of {', '.join(METHODS)}.")
    if dims not in (2, 3):
        raise ExplorerError(f"A projection is drawn in 2 or 3 dimensions, not {dims}.")
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2 or not np.isfinite(x).all():
        raise ExplorerError("The vectors to project must be a finite (N, D) matrix.")
    least = 2 if method == "pca" else MIN_POINTS
    if x.shape[0] < max(least, dims if method == "pca" else least):
        raise ExplorerError(f"{METHODS[method]} needs at least {max(least, dims)} points; there are {x.shape[0]}: "
                            "give more texts.")
    return x


def _reduced(x: np.ndarray) -> np.ndarray:
    return pca(x, min(PRE_PCA, *x.shape))[0] if x.shape[1] > PRE_PCA else x


def _tsne(x: np.ndarray, dims: int, seed: int) -> np.ndarray:
    from sklearn.manifold import TSNE  # type: ignore[import-untyped]  # scikit-learn ships no type hints

    perplexity = min(30.0, (x.shape[0] - 1) / 3)
    model = TSNE(dims, perplexity=perplexity, init="pca", random_state=seed, max_iter=TSNE_ITERATIONS,
                 method="barnes_hut" if dims < 4 else "exact")
    return np.asarray(model.fit_transform(x), dtype=np.float64)


def _umap_module() -> ModuleType:
    """umap-learn, with numba's on-disk cache on for every compiled function of it (see the module docstring)."""
    import numba
    import umap  # type: ignore[import-untyped]  # umap-learn ships no type hints
    from numba.core.dispatcher import Dispatcher

    if not _UMAP_CACHED:
        if not os.environ.get("NUMBA_CACHE_DIR"):
            numba.config.CACHE_DIR = str(persist.cache_dir() / "numba")  # type: ignore[attr-defined]  # set at import
        for name in ("umap_", "layouts", "utils", "spectral", "sparse", "distances"):
            for fn in vars(importlib.import_module(f"umap.{name}")).values():
                if isinstance(fn, Dispatcher):
                    with contextlib.suppress(RuntimeError):  # a function numba cannot cache compiles as before
                        fn.enable_caching()
        _UMAP_CACHED.append(True)
    return umap


def _umap(x: np.ndarray, dims: int, seed: int) -> np.ndarray:
    umap = _umap_module()
    with warnings.catch_warnings():  # "n_jobs overridden to 1 by setting random_state": the price of a seed
        warnings.simplefilter("ignore", UserWarning)
        model = umap.UMAP(n_components=dims, n_neighbors=min(15, x.shape[0] - 1), random_state=seed, init="pca")
        return np.asarray(model.fit_transform(x), dtype=np.float64)


def project(matrix: np.ndarray, method: str, dims: int = 2, seed: int = 0,
            progress: Progress | None = None) -> Layout:
    """``matrix`` (N, D) laid out by ``method`` in ``dims`` dimensions, seeded by ``seed``."""
    x = _check(matrix, method, dims)
    began = time.perf_counter()
    cancel.check()
    if method == "pca":
        points, explained = pca(x, dims)
        return Layout(method, dims, seed, points, tuple(float(e) for e in explained),
                      "principal components of the centred vectors", time.perf_counter() - began)
    if progress is not None:
        progress(0.0, f"{METHODS[method]} of {x.shape[0]:,} points: reducing to {PRE_PCA} dimensions by PCA")
    reduced = _reduced(x)
    cancel.check()
    if progress is not None:
        progress(0.1, f"{METHODS[method]} of {x.shape[0]:,} points: optimising the layout (no intermediate "
                      "progress from the library; seconds to a minute)")
    points = _tsne(reduced, dims, seed) if method == "tsne" else _umap(reduced, dims, seed)
    if progress is not None:
        progress(1.0, f"{METHODS[method]} of {x.shape[0]:,} points: done")
    how = (f"{METHODS[method]} of the vectors reduced to {min(PRE_PCA, x.shape[1])} dimensions by PCA, seed {seed}")
    return Layout(method, dims, seed, points, (), how, time.perf_counter() - began)
