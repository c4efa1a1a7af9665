"""explorer.architecture.patterns.counts: the closed forms agree with the masks for every kind, any length."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.architecture import patterns as P
from explorer.architecture.patterns import kinds, masks
from explorer.core.errors import ExplorerError

FAST = settings(max_examples=40, deadline=None)


def _check_counts(spec: P.PatternSpec) -> np.ndarray:
    """Whole mask == streamed chunks == closed form; returns the mask."""
    mask = P.build_mask(spec)
    assert mask.shape == (spec.q_len, spec.k_len) and mask.dtype == bool
    assert int(mask.sum()) == P.nnz_closed_form(spec) == masks.nnz_from_mask(spec)
    return mask


@FAST
@given(t=st.integers(1, 300))
def test_full_and_causal_counts(t: int) -> None:
    assert _check_counts(kinds.full(t)).all()
    mask = _check_counts(kinds.causal(t))
    assert P.nnz_closed_form(kinds.causal(t)) == t * (t + 1) // 2
    assert not np.triu(mask, 1).any(), "a causal row sees the future"
    assert mask[np.tril_indices(t)].all(), "a causal row misses a past token"


@FAST
@given(q=st.integers(1, 120), k=st.integers(1, 120))
def test_cross_attention_is_a_full_rectangle(q: int, k: int) -> None:
    mask = _check_counts(kinds.cross(q, k))
    assert mask.shape == (q, k) and mask.all()


@FAST
@given(t=st.integers(1, 300), w=st.integers(1, 80))
def test_local_causal_window(t: int, w: int) -> None:
    mask = _check_counts(kinds.local_causal(t, w))
    assert not np.triu(mask, 1).any()
    assert (mask.sum(axis=1) == np.minimum(np.arange(t) + 1, w)).all()  # row i sees min(i+1, w) keys


@FAST
@given(
    t=st.integers(1, 300), half=st.integers(1, 40), dilation=st.integers(1, 4),
    globals_=st.lists(st.integers(0, 299), max_size=6),
)
def test_sliding_window_with_globals_and_dilation(t: int, half: int, dilation: int, globals_: list[int]) -> None:
    glob = tuple(p for p in globals_ if p < t)
    spec = kinds.sliding_window(t, 2 * half, glob, dilation)
    mask = _check_counts(spec)
    assert (mask == mask.T).all(), "the window is not symmetric"
    for p in glob:
        assert mask[p].all() and mask[:, p].all(), "a global row/column is not full"
    others = np.setdiff1d(np.arange(t), glob)
    if others.size:  # non-global pairs: exactly the dilated band
        i, j = np.meshgrid(others, others, indexing="ij")
        band = (np.abs(i - j) <= half * dilation) & ((i - j) % dilation == 0)
        assert (mask[np.ix_(others, others)] == band).all()


@settings(max_examples=25, deadline=None)
@given(n_blocks=st.integers(6, 24), b=st.sampled_from([2, 3, 8, 16]), r=st.integers(0, 3),
       cut=st.integers(0, 15), seed=st.integers(0, 10_000))
def test_block_sparse_counts_including_padding(n_blocks: int, b: int, r: int, cut: int, seed: int) -> None:
    t = max(1, n_blocks * b - cut % b)  # lengths that are not multiples of block_size get padded
    _check_counts(kinds.block_sparse(t, b, r, seed))


def test_long_masks_are_counted_without_building_them() -> None:
    spec = kinds.block_sparse(16_384, 64, 3)
    with pytest.raises(ExplorerError, match="too large"):
        P.build_mask(spec)
    assert masks.nnz_from_mask(spec) == P.nnz_closed_form(spec)
