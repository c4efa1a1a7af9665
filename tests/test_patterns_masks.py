"""explorer.architecture.patterns.masks: BigBird's block layout, seeded random blocks, chunked and pooled masks."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.architecture import patterns as P
from explorer.architecture.patterns import kinds, masks
from explorer.core.errors import ExplorerError


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_bigbird_block_layout_rules(seed: int) -> None:
    spec = kinds.block_sparse(64 * 20, 64, 3, seed)
    layout = masks.bigbird_block_layout(spec)
    n = layout.shape[0]
    assert n == 20
    assert layout[[0, -1]].all() and layout[:, [0, -1]].all(), "global blocks must be full"
    rand = masks.bigbird_random_blocks(n, 3, seed)
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
    a, b = masks.bigbird_random_blocks(30, 3, 5), masks.bigbird_random_blocks(30, 3, 5)
    assert (a == b).all()
    assert not (a == masks.bigbird_random_blocks(30, 3, 6)).all()
    with pytest.raises(ValueError):
        a[0, 0] = 1  # the cached array is read-only


def test_bigbird_needs_enough_middle_blocks() -> None:
    with pytest.raises(ExplorerError, match="random candidates"):
        masks.bigbird_random_blocks(6, 3, 0)


def test_pooled_mask_is_exact_when_small_and_max_pools_when_large() -> None:
    spec = kinds.sliding_window(300, 16, (0, 150))
    pooled, f = masks.pooled_mask(spec)
    assert f == 1 and (pooled == P.build_mask(spec)).all()
    big = kinds.sliding_window(4100, 16, (0,))
    pooled, f = masks.pooled_mask(big, max_cells=512)
    assert f == 9 and pooled.shape == (456, 456)
    mask = P.build_mask(big)
    padded = np.pad(mask, ((0, 456 * 9 - 4100),) * 2)
    assert (pooled == padded.reshape(456, 9, 456, 9).any(axis=(1, 3))).all()
