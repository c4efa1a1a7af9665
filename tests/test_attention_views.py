"""explorer.tasks.attention.views: rollout, head average and the matrix behind each view."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.errors import ExplorerError
from explorer.tasks import attention as A
from explorer.tasks.attention import views


def _random_stack(layers=3, heads=2, n=5, seed=0) -> np.ndarray:
    x = np.random.default_rng(seed).random((layers, heads, n, n)).astype(np.float32)
    return x / x.sum(-1, keepdims=True)


def _maps(att: np.ndarray) -> A.AttentionMaps:
    tokens = tuple(f"t{i}" for i in range(att.shape[-1]))
    return A.AttentionMaps(model="m", tokens=tokens, attentions=att, family="encoder",
                           source_format="square", n_input_tokens=len(tokens))


def test_rollout_matches_the_hand_computed_product() -> None:
    att = _random_stack()
    eye = np.eye(5)
    mixed = [(0.5 * eye + 0.5 * att[i].mean(0)) for i in range(3)]
    mixed = [m / m.sum(-1, keepdims=True) for m in mixed]
    flow = views.rollout(att)
    np.testing.assert_allclose(flow[0], mixed[0], atol=1e-6)
    np.testing.assert_allclose(flow[2], mixed[2] @ mixed[1] @ mixed[0], atol=1e-6)
    assert np.allclose(flow.sum(-1), 1.0, atol=1e-5)


def test_rollout_of_self_attention_is_identity_and_rejects_bad_input() -> None:
    att = np.broadcast_to(np.eye(4, dtype=np.float32), (2, 3, 4, 4))
    np.testing.assert_allclose(views.rollout(att)[-1], np.eye(4), atol=1e-7)
    with pytest.raises(ExplorerError):
        views.rollout(np.zeros((2, 3, 4, 5)))
    with pytest.raises(ExplorerError):
        views.rollout(att, residual=1.0)


def test_head_average_and_select_view() -> None:
    att = _random_stack(n=8)
    maps = _maps(att)
    np.testing.assert_allclose(views.head_average(att)[1], att[1].mean(0), atol=1e-7)
    v = A.select_view(maps, "head", 2, 1, token_range=(2, 6))
    np.testing.assert_array_equal(v.matrix, att[2, 1, 2:6, 2:6])
    assert v.row_tokens == ("t2", "t3", "t4", "t5") and v.row_offset == 2
    avg = A.select_view(maps, "head-average", 0)
    np.testing.assert_allclose(avg.matrix, att[0].mean(0), atol=1e-6)
    roll = A.select_view(maps, "rollout", 2)
    np.testing.assert_allclose(roll.matrix, views.rollout(att)[2], atol=1e-6)
    d = v.to_dict()
    assert d["shape"] == [4, 4] and len(d["matrix"]) == 4


@pytest.mark.parametrize("args", [("head", 3, 0), ("head", 0, 2), ("head", -1, 0), ("cross", 0, 0),
                                  ("nope", 0, 0)])
def test_select_view_bad_arguments_are_clear_errors(args) -> None:
    with pytest.raises(ExplorerError):
        A.select_view(_maps(_random_stack()), *args)


def test_select_view_empty_range_is_an_error() -> None:
    with pytest.raises(ExplorerError, match="empty"):
        A.select_view(_maps(_random_stack()), "head", 0, 0, token_range=(4, 4))


def test_menu_views_put_the_grid_second_and_cross_only_when_there() -> None:
    assert views.menu_views(False) == ("head", "grid", "head-average", "rollout")
    assert views.menu_views(True)[-2:] == ("decoder", "cross")
    assert set(views.menu_views(True)) <= set(views.VIEW_LABELS) == set(views.VIEW_HELP)


def test_self_attention_window_zooms_without_copying() -> None:
    att = _random_stack(n=8)
    maps = _maps(att)
    window = views.self_attention_window(maps, (2, 5))
    assert window.shape == (3, 2, 3, 3) and np.shares_memory(window, att)
    np.testing.assert_array_equal(window, att[:, :, 2:5, 2:5])
    assert views.self_attention_window(maps, None).shape == att.shape
    with pytest.raises(ExplorerError, match="empty"):
        views.self_attention_window(maps, (9, 12))


def test_view_to_frame_labels_rows_and_columns_by_position() -> None:
    maps = _maps(_random_stack(n=6))
    maps = A.AttentionMaps(model="m", tokens=("the", "cat", "the", "<b>", "x", "y"), attentions=maps.attentions,
                           family="encoder", source_format="square", n_input_tokens=6)
    df = A.select_view(maps, "head", 1, 0, token_range=(1, 4)).to_frame()
    assert list(df.columns) == ["query", "1 cat", "2 the", "3 <b>"] and list(df["query"]) == ["1 cat", "2 the", "3 <b>"]
    np.testing.assert_allclose(df.iloc[:, 1:].to_numpy(), maps.attentions[1, 0, 1:4, 1:4], atol=1e-6)
