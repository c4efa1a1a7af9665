"""explorer.tasks.attention.compact: pruned links, block means, uint8 codes and .npy bytes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.tasks.attention import compact


def _random_stack(layers=3, heads=2, n=5, seed=0) -> np.ndarray:
    x = np.random.default_rng(seed).random((layers, heads, n, n)).astype(np.float32)
    return x / x.sum(-1, keepdims=True)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 5), st.integers(0, 10_000))
def test_prune_links_keeps_the_strongest_per_query(rows, cols, k, seed) -> None:
    m = np.random.default_rng(seed).random((rows, cols)).astype(np.float32)
    links = compact.prune_links(m, top_k=k)
    kk = min(k, cols)
    assert links.shape == (rows * kk, 3)
    for q in range(rows):
        mine = links[links[:, 0] == q]
        np.testing.assert_allclose(mine[:, 2], np.sort(m[q])[::-1][:kk])  # strongest first
        np.testing.assert_allclose(m[q, mine[:, 1].astype(int)], mine[:, 2])


def test_prune_links_min_weight_drops_weak_links() -> None:
    m = np.array([[0.7, 0.2, 0.1], [0.05, 0.05, 0.9]], dtype=np.float32)
    links = compact.prune_links(m, top_k=2, min_weight=0.15)
    assert links.tolist() == [[0, 0, pytest.approx(0.7)], [0, 1, pytest.approx(0.2)], [1, 2, pytest.approx(0.9)]]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 16), st.integers(0, 10_000))
def test_downsample_is_a_block_mean_that_keeps_the_total(rows, cols, size, seed) -> None:
    m = np.random.default_rng(seed).random((2, rows, cols))
    small = compact.downsample(m, size)
    r, c = compact.bin_edges(rows, size), compact.bin_edges(cols, size)
    assert small.shape == (2, min(rows, size), min(cols, size))
    np.testing.assert_allclose((small * np.outer(np.diff(r), np.diff(c))).sum(), m.sum(), rtol=1e-5)
    np.testing.assert_allclose(small[1, -1, 0], m[1, r[-2]:, : c[1]].mean(), rtol=1e-5)


def test_downsample_is_identity_when_small_enough() -> None:
    m = _random_stack(n=6)
    np.testing.assert_allclose(compact.downsample(m, 64), m, atol=1e-7)


def test_quantize_uint8_round_trip_error_is_half_a_step() -> None:
    m = _random_stack(n=16)
    codes, vmax = compact.quantize_uint8(m)
    assert codes.dtype == np.uint8 and codes.max() == 255 and vmax == pytest.approx(float(m.max()))
    assert np.abs(codes * (vmax / 255) - m).max() <= vmax / 510 + 1e-7
    zeros, top = compact.quantize_uint8(np.zeros((3, 3)))
    assert top == 1.0 and zeros.max() == 0


def test_npy_bytes_round_trip() -> None:
    import io

    m = _random_stack()
    np.testing.assert_array_equal(np.load(io.BytesIO(compact.npy_bytes(m))), m)
