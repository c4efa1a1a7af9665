"""Attention-pattern masks: closed-form counts against the masks, and each kind's structural rules."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import patterns as P
from explorer.errors import ExplorerError

FAST = settings(max_examples=40, deadline=None)


def _check_counts(spec: P.PatternSpec) -> np.ndarray:
    """Whole mask == streamed chunks == closed form; returns the mask."""
    mask = P.build_mask(spec)
    assert mask.shape == (spec.q_len, spec.k_len) and mask.dtype == bool
    assert int(mask.sum()) == P.nnz_closed_form(spec) == P.nnz_from_mask(spec)
    return mask


# --- closed form == mask, for every kind ---------------------------------------------------------


@FAST
@given(t=st.integers(1, 300))
def test_full_and_causal_counts(t: int) -> None:
    assert _check_counts(P.full(t)).all()
    mask = _check_counts(P.causal(t))
    assert P.nnz_closed_form(P.causal(t)) == t * (t + 1) // 2
    assert not np.triu(mask, 1).any(), "a causal row sees the future"
    assert mask[np.tril_indices(t)].all(), "a causal row misses a past token"


@FAST
@given(q=st.integers(1, 120), k=st.integers(1, 120))
def test_cross_attention_is_a_full_rectangle(q: int, k: int) -> None:
    mask = _check_counts(P.cross(q, k))
    assert mask.shape == (q, k) and mask.all()


@FAST
@given(t=st.integers(1, 300), w=st.integers(1, 80))
def test_local_causal_window(t: int, w: int) -> None:
    mask = _check_counts(P.local_causal(t, w))
    assert not np.triu(mask, 1).any()
    assert (mask.sum(axis=1) == np.minimum(np.arange(t) + 1, w)).all()  # row i sees min(i+1, w) keys


@FAST
@given(
    t=st.integers(1, 300), half=st.integers(1, 40), dilation=st.integers(1, 4),
    globals_=st.lists(st.integers(0, 299), max_size=6),
)
def test_sliding_window_with_globals_and_dilation(t: int, half: int, dilation: int, globals_: list[int]) -> None:
    glob = tuple(p for p in globals_ if p < t)
    spec = P.sliding_window(t, 2 * half, glob, dilation)
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
    _check_counts(P.block_sparse(t, b, r, seed))


# --- BigBird structure -----------------------------------------------------------------------------


def test_bigbird_fallback_rule_matches_transformers() -> None:
    # BigBirdModel.forward: seq_length <= (5 + 2 * num_random_blocks) * block_size -> original_full
    assert P.bigbird_falls_back(704, 64, 3) and not P.bigbird_falls_back(705, 64, 3)
    short, long_ = P.block_sparse(704, 64, 3), P.block_sparse(705, 64, 3)
    assert P.effective_kind(short) == "full" and P.build_mask(short).all()
    assert P.effective_kind(long_) == "block-sparse" and not P.build_mask(long_).all()
    assert "falls back to full" in P.describe(short)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_bigbird_block_layout_rules(seed: int) -> None:
    spec = P.block_sparse(64 * 20, 64, 3, seed)
    layout = P.bigbird_block_layout(spec)
    n = layout.shape[0]
    assert n == 20
    assert layout[[0, -1]].all() and layout[:, [0, -1]].all(), "global blocks must be full"
    rand = P.bigbird_random_blocks(n, 3, seed)
    for i in range(1, n - 1):
        window = {i - 1, i, i + 1}
        assert all(layout[i, c] for c in window)
        picked = set(rand[i - 1].tolist())
        assert len(picked) == 3 and not picked & (window | {0, n - 1}), "random block overlaps window/global"
        outside = {c for c in range(n) if layout[i, c]} - window - {0, n - 1}
        assert outside == picked, "row has other blocks than its random picks"
    # tokens inherit the block layout
    mask = P.build_mask(spec)
    assert (mask[::64, ::64] == layout).all()


def test_bigbird_random_blocks_are_seeded() -> None:
    a, b = P.bigbird_random_blocks(30, 3, 5), P.bigbird_random_blocks(30, 3, 5)
    assert (a == b).all()
    assert not (a == P.bigbird_random_blocks(30, 3, 6)).all()
    with pytest.raises(ValueError):
        a[0, 0] = 1  # the cached array is read-only


def test_bigbird_needs_enough_middle_blocks() -> None:
    with pytest.raises(ExplorerError, match="random candidates"):
        P.bigbird_random_blocks(6, 3, 0)


# --- costs, pooling, validation ------------------------------------------------------------------


def test_stats_memory_and_flops() -> None:
    s = P.pattern_stats(P.full(512, d_head=64))
    assert s.nnz == 512 * 512 and s.density == 1.0
    assert s.score_memory_bytes == s.dense_score_memory_bytes == 4 * 512 * 512
    assert s.flops == 4 * 64 * 512 * 512
    c = P.pattern_stats(P.causal(512))
    assert c.score_memory_bytes == 4 * 512 * 513 // 2 and c.dense_score_memory_bytes == 4 * 512 * 512
    assert set(s.to_dict()) >= {"kind", "nnz", "density", "score_memory_bytes"}


def test_cost_curve_quadratic_vs_linear() -> None:
    lengths = (1024, 2048, 4096, 8192, 16_384)
    full = P.cost_curve(P.full(8), lengths)
    band = P.cost_curve(P.sliding_window(8, 512, (0,)), lengths)
    bird = P.cost_curve(P.block_sparse(8, 64, 3), lengths)
    assert full.nnz[-1] / full.nnz[-2] == 4.0  # doubling T quadruples full attention
    assert 1.9 < band.nnz[-1] / band.nnz[-2] < 2.1  # ... and doubles a window
    assert 1.9 < bird.nnz[-1] / bird.nnz[-2] < 2.1
    assert full.to_dict()["lengths"] == list(lengths)


def test_cost_curve_averages_layers() -> None:
    lengths = (4096,)
    neo = P.cost_curve([P.causal(8), P.local_causal(8, 256)], lengths)
    expected = (P.nnz_closed_form(P.causal(4096)) + P.nnz_closed_form(P.local_causal(4096, 256))) / 2
    assert neo.nnz == (expected,)


def test_default_lengths_span_512_to_16k() -> None:
    lengths = P.default_lengths()
    assert lengths[0] == 512 and lengths[-1] == 16_384 and list(lengths) == sorted(set(lengths))


def test_pooled_mask_is_exact_when_small_and_max_pools_when_large() -> None:
    spec = P.sliding_window(300, 16, (0, 150))
    pooled, f = P.pooled_mask(spec)
    assert f == 1 and (pooled == P.build_mask(spec)).all()
    big = P.sliding_window(4100, 16, (0,))
    pooled, f = P.pooled_mask(big, max_cells=512)
    assert f == 9 and pooled.shape == (456, 456)
    mask = P.build_mask(big)
    padded = np.pad(mask, ((0, 456 * 9 - 4100),) * 2)
    assert (pooled == padded.reshape(456, 9, 456, 9).any(axis=(1, 3))).all()


def test_long_masks_are_counted_without_building_them() -> None:
    spec = P.block_sparse(16_384, 64, 3)
    with pytest.raises(ExplorerError, match="too large"):
        P.build_mask(spec)
    assert P.nnz_from_mask(spec) == P.nnz_closed_form(spec)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: P.full(0), "between 1 and"),
        (lambda: P.causal(10**9), "between 1 and"),
        (lambda: P.full(12.5), "whole number"),
        (lambda: P.sliding_window(100, 7), "even"),
        (lambda: P.sliding_window(100, 8, (0, 100)), "outside the sequence"),
        (lambda: P.local_causal(10, 0), "at least 1"),
        (lambda: P.sliding_window(100, 8, (0,), dilation=0), "Dilation"),
        (lambda: P.block_sparse(100, 0, 3), "block_size"),
        (lambda: P.PatternSpec("diagonal", 4, 4).with_length(8), "Unknown pattern kind"),
    ],
)
def test_bad_parameters_raise_explorer_error(build, match: str) -> None:
    with pytest.raises(ExplorerError, match=match):
        build()
