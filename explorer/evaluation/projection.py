"""Vectors laid out in 2-D or 3-D: PCA (here, equal to scikit-learn's up to sign), t-SNE (scikit-learn) or UMAP
(umap-learn), every one seeded so that one seed gives the same picture every time.

* PCA: the centred matrix's singular vectors, each signed so that its largest entry is positive (a rule of its
  own, so the picture does not flip between runs); the share of variance each axis explains is kept.
* t-SNE (van der Maaten & Hinton 2008) and UMAP (McInnes et al. 2018) read the vectors reduced to
  :data:`PRE_PCA` dimensions by the PCA above first, as both papers advise for wide embeddings: the neighbour
  search on 2,000 x 384 values is most of their time. Perplexity (t-SNE) and neighbours (UMAP) shrink for small
  sets, which would otherwise be refused.

Points that are the same vector (the same text twice; :data:`DUPLICATE` of the largest value apart at most) are one
point to t-SNE and UMAP: the distinct ones are laid out and each repeat is drawn on its twin, with a notice. Fewer
than :data:`MIN_POINTS` distinct points (ten copies of one sentence) are refused in words, where scikit-learn's
t-SNE would divide by a zero spread and crash the process and UMAP would return NaN; PCA draws them on one spot.
Both run in a worker process (:mod:`~explorer.evaluation.layoutworker`), so a crash the checks did not foresee
costs one request, not the server, and their output is checked: a point without a finite position is an error,
never a silent NaN.

scikit-learn and umap-learn are imported when their method is asked for (in the worker). umap-learn compiles its
functions with numba the first time they run in a process, and caches few of them: on 2 CPU cores that is 30-90 s
before the first layout, every process, past a page's time budget. :func:`_umap_module` turns numba's on-disk cache
on for all of them (in the explorer's cache folder unless ``NUMBA_CACHE_DIR`` says where), so they compile once per
machine and later processes load them in about a second.

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
from explorer.core.notices import Notice
from explorer.evaluation import layoutworker
from explorer.runtime import cancel

__all__ = ["DUPLICATE", "METHODS", "MIN_POINTS", "PRE_PCA", "Layout", "numba_cache_dir", "pca", "project"]

METHODS = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP"}
PRE_PCA = 50  # dimensions t-SNE and UMAP read (van der Maaten 2014 reduces to 50 before t-SNE)
MIN_POINTS = 5  # t-SNE and UMAP need some neighbours; PCA needs two points
TSNE_ITERATIONS = 500  # scikit-learn's default is 1,000; the layout settles by 500 on sentence embeddings
DUPLICATE = 1e-5  # vectors closer than this share of the largest value are one point (float noise of one text)
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
    notices: tuple[Notice, ...] = ()


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
    if x.ndim != 2 or x.shape[1] == 0:
        raise ExplorerError("The vectors to project must be an (N, D) matrix with at least one column.")
    if (bad := int((~np.isfinite(x)).any(axis=1).sum())) > 0:
        raise ExplorerError(f"{bad:,} of the {x.shape[0]:,} vectors hold NaN or infinite values (the model's numbers "
                            "overflowed), so they have no place to be drawn: run the model in float32, or pick "
                            "another layer or model.")
    least = 2 if method == "pca" else MIN_POINTS
    if x.shape[0] < max(least, dims if method == "pca" else least):
        raise ExplorerError(f"{METHODS[method]} needs at least {max(least, dims)} points; there are {x.shape[0]}: "
                            "give more texts.")
    return x


def _distinct(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the first point of each distinct vector, in order (K,), which of them each point is (N,)): vectors within
    :data:`DUPLICATE` of the largest absolute value of each other, on a grid of that step, count as one."""
    scale = float(np.abs(x).max())
    if scale == 0:  # every vector is zero
        return np.zeros(1, dtype=np.int64), np.zeros(x.shape[0], dtype=np.int64)
    _, first, inverse = np.unique(np.round(x / (scale * DUPLICATE)), axis=0, return_index=True,
                                  return_inverse=True)
    order = np.argsort(first)  # distinct vectors in the order they first appear: no repeat, no change
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[inverse.reshape(-1)]


def _repeats(n: int, distinct: int, unit: str, method: str) -> tuple[Notice, ...]:
    """The notice (or refusal) for ``n`` points of which ``distinct`` are different vectors."""
    if distinct == n:
        return ()
    name = METHODS[method]
    if method != "pca" and distinct < MIN_POINTS:
        what = (f"All {n:,} {unit} have the same vector (the same text typed {n:,} times?)" if distinct == 1 else
                f"{n - distinct:,} of the {n:,} {unit} repeat another's vector (the same text typed again?), which "
                f"leaves {distinct:,} different ones")
        raise ExplorerError(f"{what}: {name} lays out different points and needs at least {MIN_POINTS}. Give more "
                            "different texts, or pick PCA, which draws repeats on one spot.")
    if distinct == 1:
        return (Notice("info", f"All {n:,} {unit} have the same vector (the same text typed {n:,} times?): "
                               f"{name} draws them on one spot, and its axes explain nothing."),)
    return (Notice("info", f"{n - distinct:,} of the {n:,} {unit} repeat another's vector (the same text typed "
                           f"again?): each repeat is drawn on top of its twin ({name} of the {distinct:,} different "
                           "ones)."),)


def _reduced(x: np.ndarray) -> np.ndarray:
    return pca(x, min(PRE_PCA, *x.shape))[0] if x.shape[1] > PRE_PCA else x


def _tsne(x: np.ndarray, dims: int, seed: int) -> np.ndarray:
    from sklearn.manifold import TSNE  # type: ignore[import-untyped]  # scikit-learn ships no type hints

    perplexity = min(30.0, (x.shape[0] - 1) / 3)
    model = TSNE(dims, perplexity=perplexity, init="pca", random_state=seed, max_iter=TSNE_ITERATIONS,
                 method="barnes_hut" if dims < 4 else "exact")
    return np.asarray(model.fit_transform(x), dtype=np.float64)


def numba_cache_dir() -> str:
    """Where umap-learn's compiled functions are kept: ``NUMBA_CACHE_DIR``, else the explorer's cache folder."""
    return os.environ.get("NUMBA_CACHE_DIR") or str(persist.cache_dir() / "numba")


def _umap_module() -> ModuleType:
    """umap-learn, with numba's on-disk cache on for every compiled function of it (see the module docstring)."""
    import numba
    import umap  # type: ignore[import-untyped]  # umap-learn ships no type hints
    from numba.core.dispatcher import Dispatcher

    if not _UMAP_CACHED:
        numba.config.CACHE_DIR = numba_cache_dir()  # type: ignore[attr-defined]  # read when a function compiles
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


def _laid_out(x: np.ndarray, method: str, dims: int, seed: int) -> np.ndarray:
    """t-SNE or UMAP of ``x`` (K, D) in the worker process: (K, dims), every position finite."""
    fn = _tsne if method == "tsne" else _umap
    points = layoutworker.run(fn, x, dims, seed, what=f"the {METHODS[method]} layout of {x.shape[0]:,} points")
    if (bad := int((~np.isfinite(points)).any(axis=1).sum())) > 0:
        raise ExplorerError(f"{METHODS[method]} gave {bad:,} of {x.shape[0]:,} points no finite position (a failure "
                            "inside the library): try another seed, or PCA.")
    return points


def project(matrix: np.ndarray, method: str, dims: int = 2, seed: int = 0,
            progress: Progress | None = None, unit: str = "points") -> Layout:
    """``matrix`` (N, D) laid out by ``method`` in ``dims`` dimensions, seeded by ``seed`` (``unit``: what a row
    is, for the notices: "texts", "tokens")."""
    x = _check(matrix, method, dims)
    first, which = _distinct(x)
    notices = _repeats(x.shape[0], first.size, unit, method)
    began = time.perf_counter()
    cancel.check()
    if method == "pca":
        points, explained = pca(x, dims)
        return Layout(method, dims, seed, points, tuple(float(e) for e in explained),
                      "principal components of the centred vectors", time.perf_counter() - began, notices)
    name = f"{METHODS[method]} of {first.size:,} points"
    if progress is not None:
        progress(0.0, f"{name}: reducing to {PRE_PCA} dimensions by PCA")
    reduced = _reduced(x[first])
    cancel.check()
    if progress is not None:
        progress(0.1, f"{name}: optimising the layout (no intermediate progress from the library; seconds to a "
                      "minute)")
    points = _laid_out(reduced, method, dims, seed)[which]  # (N, dims): each repeat on its twin's spot
    if progress is not None:
        progress(1.0, f"{name}: done")
    how = (f"{METHODS[method]} of the vectors reduced to {min(PRE_PCA, x.shape[1])} dimensions by PCA, seed {seed}")
    return Layout(method, dims, seed, points, (), how, time.perf_counter() - began, notices)
