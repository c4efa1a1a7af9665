"""Two layouts of the same texts made comparable: the second turned onto the first by orthogonal Procrustes.

Two models' projections of the same sentences come out at arbitrary angles, mirror images and scales (PCA's signs,
t-SNE's and UMAP's random starts), so side by side they look unrelated even when the neighbourhoods agree. The
orthogonal Procrustes solution (Schönemann 1966) is the rotation (or reflection) ``R`` minimising
``||B R - A||``: with both centred and scaled to unit size, ``R = U Vᵀ`` from the SVD ``Bᵀ A = U S Vᵀ``. The
second layout is then scaled and moved onto the first; what is left (the disparity, 0 to 1, scipy's
``procrustes`` measure) says how differently the two models arrange the texts.

>>> import numpy as np
>>> a = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
>>> turned = 3 * a @ np.array([[0.0, -1.0], [1.0, 0.0]]) + 5  # rotated, scaled, moved
>>> b, disparity = align(a, turned)
>>> np.allclose(b, a), round(disparity, 9)
(True, 0.0)
"""

from __future__ import annotations

import numpy as np

from explorer.core.errors import ExplorerError

__all__ = ["align"]


def align(reference: np.ndarray, moving: np.ndarray) -> tuple[np.ndarray, float]:
    """``moving`` (N, k) rotated, scaled and moved onto ``reference`` (N, k); and the disparity left (0..1)."""
    a, b = np.asarray(reference, dtype=np.float64), np.asarray(moving, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ExplorerError(f"Two layouts are aligned point by point: {a.shape} and {b.shape} differ (give both "
                            "models the same texts).")
    a_mean, b_mean = a.mean(axis=0), b.mean(axis=0)
    a0, b0 = a - a_mean, b - b_mean
    a_norm, b_norm = np.linalg.norm(a0), np.linalg.norm(b0)
    if a_norm == 0 or b_norm == 0:
        return np.repeat(a_mean[None, :], a.shape[0], axis=0), 0.0
    a0, b0 = a0 / a_norm, b0 / b_norm
    u, s, vt = np.linalg.svd(b0.T @ a0)  # (k, k)
    rotation = u @ vt
    disparity = float(max(0.0, 1.0 - s.sum() ** 2))
    return (b0 @ rotation) * a_norm + a_mean, disparity
