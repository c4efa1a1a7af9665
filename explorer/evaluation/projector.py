"""The embedding projector's results: vectors laid out, two models side by side, and a sentence's neighbours.

A :class:`Projection` is one model's points (sentences or tokens, from :mod:`~explorer.evaluation.vectors`) laid
out by :mod:`~explorer.evaluation.projection`; :func:`side_by_side` turns a second model's layout of the same
texts onto the first (:mod:`~explorer.evaluation.procrustes`) so the two pictures can be compared point by point;
:func:`neighbours` ranks the points by cosine similarity to a typed sentence's vector, in the full embedding
space (a 2-D picture distorts distances; the neighbours do not depend on it).

>>> import numpy as np
>>> from explorer.evaluation.vectors import Vectors
>>> vec = Vectors("m", "sentences", np.eye(3, dtype=np.float32), ("a", "b", "c"), (0, 1, 2), "unit")
>>> [(n.rank, n.text, n.cosine) for n in neighbours(vec, np.array([0.0, 0.6, 0.8]), k=2)]
[(1, 'c', 0.8), (2, 'b', 0.6)]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.limits import EVALUATION_QUERY_CHARS
from explorer.core.notices import Notice, texts
from explorer.evaluation import procrustes, projection
from explorer.evaluation.vectors import Vectors, left_out_notice

__all__ = ["Neighbour", "Projection", "check_query", "neighbours", "project", "side_by_side"]

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Projection:
    """One model's points laid out: ``points`` (N, dims), a label and an owning text per point."""

    model: str
    kind: str  # "sentences" or "tokens"
    method: str
    dims: int
    seed: int
    points: np.ndarray  # (N, dims)
    labels: tuple[str, ...]
    owners: tuple[int, ...]  # index of the text each point belongs to
    how: str  # the vectors and the layout, in words
    explained: tuple[float, ...] = ()
    layer: int | None = None
    disparity: float | None = None  # after side_by_side: what Procrustes could not align (0..1)
    seconds: float = 0.0
    notices: tuple[Notice, ...] = ()
    device: str = "cpu"
    device_name: str = "cpu"
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        """JSON-able: ``{"model", "method", "points": [[x, y], ...], ...}``."""
        return {"model": self.model, "kind": self.kind, "method": self.method, "dims": self.dims, "seed": self.seed,
                "layer": self.layer, "how": self.how, "explained": [round(e, 6) for e in self.explained],
                "points": [[round(float(v), 6) for v in row] for row in self.points], "labels": list(self.labels),
                "owners": list(self.owners), "disparity": self.disparity, "seconds": round(self.seconds, 3),
                "notices": texts(self.notices), "device": self.device, "device_name": self.device_name,
                "dtype": self.dtype}


@dataclass(frozen=True)
class Neighbour:
    rank: int  # 1 = nearest
    index: int  # the point's index
    text: str
    cosine: float


def project(vectors: Vectors, method: str, dims: int = 2, seed: int = 0,
            progress: Progress | None = None) -> Projection:
    """``vectors`` laid out by ``method`` (pca, tsne, umap) in ``dims`` dimensions, seeded by ``seed``."""
    layout = projection.project(vectors.matrix, method, dims, seed, progress,
                                unit="texts" if vectors.kind == "sentences" else "tokens")
    cut = left_out_notice(vectors)
    notices = ((Notice("stopped", cut),) if cut else ()) + layout.notices
    return Projection(vectors.model, vectors.kind, method, dims, seed, layout.points, vectors.labels, vectors.owners,
                      f"{vectors.how}; {layout.how}", layout.explained, vectors.layer, None,
                      vectors.seconds + layout.seconds, notices, vectors.device, vectors.device_name, vectors.dtype)


def side_by_side(first: Projection, second: Projection) -> tuple[Projection, Projection]:
    """Both projections, the second turned, scaled and moved onto the first (same texts, same order; when one was
    cut by its budget, both are compared on the texts both embedded)."""
    shared = min(_texts(first), _texts(second))
    first, second = _common(first, shared), _common(second, shared)
    if first.kind != second.kind or len(first.points) != len(second.points):
        raise ExplorerError("Two projections are compared point by point: give both models the same texts (and "
                            "both sentences, or both tokens of the same tokenizer).")
    moved, disparity = procrustes.align(first.points, second.points)
    note = Notice("info", f"{second.model}'s layout is rotated, scaled and moved onto {first.model}'s by orthogonal "
                          f"Procrustes; what is left differs by {disparity:.2f} (0: the same arrangement, 1: "
                          "unrelated).")
    return replace(first, disparity=0.0), replace(second, points=moved, disparity=disparity,
                                                  notices=second.notices + (note,))


def _texts(p: Projection) -> int:
    """How many texts ``p``'s points come from (its first ones: a cut embedding keeps a prefix)."""
    return max(p.owners, default=-1) + 1


def _common(p: Projection, texts: int) -> Projection:
    """``p``'s points of its first ``texts`` texts."""
    if _texts(p) <= texts:
        return p
    keep = [i for i, o in enumerate(p.owners) if o < texts]
    return replace(p, points=p.points[keep], labels=tuple(p.labels[i] for i in keep),
                   owners=tuple(p.owners[i] for i in keep))


def check_query(text: object) -> str:
    """The typed sentence whose neighbours to find, or one ExplorerError (not text, empty, too long, NUL)."""
    if not isinstance(text, str) or not text.strip():
        raise ExplorerError("Type a sentence to find its nearest neighbours among the points.")
    if len(text) > EVALUATION_QUERY_CHARS:
        raise ExplorerError(f"The sentence has {len(text):,} characters; at most {EVALUATION_QUERY_CHARS:,}: "
                            "shorten it.")
    if "\x00" in text:
        raise ExplorerError("The sentence holds a NUL character, which no tokenizer reads: remove it.")
    return text.strip()


def neighbours(vectors: Vectors, query: np.ndarray, k: int = 10) -> tuple[Neighbour, ...]:
    """The ``k`` points nearest ``query`` (D,) by cosine similarity, nearest first."""
    matrix = np.asarray(vectors.matrix, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64).reshape(-1)
    if q.shape[0] != matrix.shape[1]:
        raise ExplorerError(f"The query's vector has {q.shape[0]} dimensions and the points {matrix.shape[1]}: embed "
                            "the query with the same model.")
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(q) or 1.0)
    cosines = matrix @ q / np.where(norms == 0, 1.0, norms)  # (N,)
    order = np.argsort(-cosines, kind="stable")[:k]
    return tuple(Neighbour(r + 1, int(i), vectors.labels[i], round(float(cosines[i]), 6)) for r, i in enumerate(order))
