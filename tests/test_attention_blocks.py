"""explorer.tasks.attention.blocks and .detail: block masses (row sums, reference reshape-mean, edge blocks),
zoom == slice, query rows, bounds."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.tasks.attention import blocks as B
from explorer.tasks.attention import detail as D
from explorer.tasks.attention.maps import AttentionMaps


def _stochastic(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    a = np.random.default_rng(seed).random(shape).astype(np.float32)
    return a / a.sum(-1, keepdims=True)


@pytest.mark.parametrize("length", [7, 64, 100, 257, 1000])
@pytest.mark.parametrize("block", [1, 3, 16])
def test_rows_of_block_masses_still_sum_to_one(length, block) -> None:
    att = _stochastic((2, 3, length, length))
    mass = B.block_mass(att, block)
    n = -(-length // block)
    assert mass.shape == (2, 3, n, n) and np.allclose(mass.sum(-1), 1.0, atol=1e-5)


def test_block_mean_matches_a_reshape_mean_reference_with_padded_edges() -> None:
    att = np.arange(10 * 10, dtype=np.float32).reshape(10, 10)  # exact known matrix, 10 = 3 + 3 + 3 + 1
    ref = np.empty((4, 4))
    edges = [0, 3, 6, 9, 10]
    for i in range(4):
        for j in range(4):  # reference: mean of the real cells of each tile
            ref[i, j] = att[edges[i]:edges[i + 1], edges[j]:edges[j + 1]].mean()
    np.testing.assert_allclose(B.block_mean(att, 3), ref, rtol=1e-6)
    full = att[:9, :9].reshape(3, 3, 3, 3).mean(axis=(1, 3))  # the divisible part: plain reshape-mean
    np.testing.assert_allclose(B.block_mean(att, 3)[:3, :3], full, rtol=1e-6)
    counts = np.diff(edges)
    np.testing.assert_allclose(B.block_mass(att, 3), ref * counts[None, :], rtol=1e-6)  # mass = mean x keys
    assert B.block_edges(10, 3) == edges


def test_numpy_and_torch_give_the_same_blocks() -> None:
    att = _stochastic((4, 50, 50))
    np.testing.assert_allclose(B.block_mass(torch.from_numpy(att), 7).numpy(), B.block_mass(att, 7), atol=1e-7)


def test_block_for_keeps_the_side_bounded() -> None:
    for length in (1, 255, 256, 257, 4096, 16_384):
        assert -(-length // B.block_for(length)) <= B.BLOCK_SIDE
    with pytest.raises(ExplorerError):
        B.block_mass(np.zeros((2, 2)), 0)


def _maps(length: int = 600) -> AttentionMaps:
    return AttentionMaps("m", tuple(f"t{i}" for i in range(length)), _stochastic((2, 2, length, length)),
                         "encoder", "square", length)


def test_zoom_is_a_slice_of_the_full_map_and_rows_are_rows() -> None:
    maps = _maps()
    np.testing.assert_array_equal(D.zoom_cells(maps, 1, 0, (100, 180), (500, 600)),
                                  maps.attentions[1, 0, 100:180, 500:600])
    np.testing.assert_array_equal(D.query_cells(maps, 0, 1, 599), maps.attentions[0, 1, 599])
    cells = D.block_map(maps, 1, 1)
    assert cells.shape == (200, 200) and np.allclose(cells.sum(1), 1.0, atol=1e-5)  # 600 tokens -> blocks of 3
    assert np.allclose(D.block_map(maps, 0, None), B.block_mass(maps.attentions[0], 3).mean(0), atol=1e-6)


def test_block_maps_ask_the_model_again_for_single_cells() -> None:
    full = _maps(40)
    blocked = AttentionMaps("m", full.tokens, B.block_mass(full.attentions, 4), "encoder", "square", 40, block=4)
    calls = []

    def rerun(layer, head, rows, cols):
        calls.append((layer, head, rows, cols))
        return full.attentions[layer, head, rows[0]:rows[1], slice(None) if cols is None else slice(*cols)]

    np.testing.assert_array_equal(D.zoom_cells(blocked, 1, 1, (3, 9), (0, 40), rerun=rerun),
                                  full.attentions[1, 1, 3:9])
    np.testing.assert_array_equal(D.query_cells(blocked, 0, 0, 5, rerun=rerun), full.attentions[0, 0, 5])
    assert calls == [(1, 1, (3, 9), (0, 40)), (0, 0, (5, 6), None)]
    np.testing.assert_array_equal(D.block_map(blocked, 1, 0), blocked.attentions[1, 0])
    with pytest.raises(ExplorerError, match="needs the model again"):
        D.zoom_cells(blocked, 0, 0, (0, 4), (0, 4))


@pytest.mark.parametrize(("rows", "cols", "match"), [((5, 5), (0, 4), "empty"), ((0, 600), (0, 4), "at most 512"),
                                                     ((0, 4), (700, 800), "empty")])
def test_bad_zoom_ranges_are_clear_messages(rows, cols, match) -> None:
    with pytest.raises(ExplorerError, match=match):
        D.zoom_cells(_maps(), 0, 0, rows, cols)


def test_bad_layer_head_query_are_clear_messages() -> None:
    with pytest.raises(ExplorerError, match="does not exist"):
        D.block_map(_maps(), 2, 0)
    with pytest.raises(ExplorerError, match="Query 600 does not exist"):
        D.query_cells(_maps(), 0, 0, 600)
