"""explorer.plots.attention: what the figures carry (data, labels, escaping, payload size)."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from explorer.plots import attention as P
from explorer.tasks import attention as A
from explorer.tasks.attention import compact


def _view(n: int = 6, tokens: tuple[str, ...] | None = None, seed: int = 0) -> A.ViewMatrix:
    m = np.random.default_rng(seed).random((n, n)).astype(np.float32)
    m /= m.sum(-1, keepdims=True)
    tokens = tokens or tuple(f"t{i}" for i in range(n))
    return A.ViewMatrix(view="head", title="Self-attention: layer 0, head 0", matrix=m,
                        row_tokens=tokens, col_tokens=tokens)


def _decode(arr: dict) -> np.ndarray:
    """Plotly 7 JSON stores arrays as {"dtype", "bdata"(, "shape")}."""
    data = np.frombuffer(base64.b64decode(arr["bdata"]), dtype=np.dtype(arr["dtype"]))
    return data.reshape([int(s) for s in str(arr["shape"]).split(",")]) if "shape" in arr else data


def test_head_heatmap_carries_the_matrix_and_escaped_unique_labels() -> None:
    tokens = ("[CLS]", "the", "<script>", "the", "ok", "[SEP]")
    view = _view(tokens=tokens)
    fig = P.head_heatmap(view, untrained=True)
    trace = json.loads(fig.to_json())["data"][0]
    np.testing.assert_array_equal(_decode(trace["z"]), view.matrix)  # exact float32, no rounding
    assert trace["x"][2] == "2 &lt;script&gt;" and len(set(trace["x"])) == 6  # repeated "the" kept apart
    assert "untrained" in fig.layout.title.text


def test_link_view_draws_only_the_pruned_links() -> None:
    view = _view(n=10)
    fig = P.link_view(view, top_k=2, min_weight=0.0)
    lines = [t for t in fig.data if t.mode == "lines"]
    n_segments = sum(int(np.isnan(np.asarray(t.x, dtype=float)).sum()) for t in lines)
    assert n_segments == 20  # 10 queries x 2 links, nothing else
    texts = [t for t in fig.data if t.mode == "markers+text"]
    assert len(texts) == 2 and "→" in texts[0].hovertext[0]


def test_link_view_refuses_long_texts() -> None:
    with pytest.raises(ValueError):
        P.link_view(_view(n=P.LINK_MAX_TOKENS + 1))


def test_model_grid_places_each_head_in_its_cell() -> None:
    rng = np.random.default_rng(1)
    att = rng.random((3, 4, 10, 10)).astype(np.float32)
    fig = P.model_grid(att, cell=64)
    trace = json.loads(fig.to_json())["data"][0]
    z = _decode(trace["z"])
    assert trace["z"]["dtype"] == "u1"  # one byte per cell on the wire
    gap = 1
    codes, _ = compact.quantize_uint8(np.sqrt(att))  # colours follow sqrt(weight) by default
    for layer, head in [(0, 0), (2, 3), (1, 2)]:
        r0, c0 = layer * (10 + gap), head * (10 + gap)
        np.testing.assert_array_equal(z[r0:r0 + 10, c0:c0 + 10], np.maximum(codes[layer, head], 1))
    assert z[10, :].max() == 0 and z[:, 10].max() == 0  # white gaps between cells
    assert trace["x"][c0] == "head 2 · keys 0" and len(set(trace["y"])) == len(trace["y"])


def test_model_grid_of_12_layers_12_heads_512_tokens_stays_small() -> None:
    att = np.random.default_rng(2).random((12, 12, 512, 512)).astype(np.float32)
    fig = P.model_grid(att, cell=64)
    size = P.payload_bytes(fig)
    assert size < 1_500_000  # the payload budget is 5 MB; a float32 grid would be ~200 MB
    assert fig.data[0].y[0] == "layer 0 · queries 0–7"  # 512 tokens in 64 bins of 8
    assert fig.data[0].z.shape == (12 * (64 + 6), 12 * (64 + 6))


def test_model_grid_colour_bar_is_labelled_in_real_weights() -> None:
    att = np.zeros((1, 1, 4, 4), dtype=np.float32)
    att[0, 0, 0, 0] = 0.64
    fig = P.model_grid(att, gamma=0.5)
    assert fig.data[0].colorbar.ticktext[-1] == "0.640"  # top of the bar: the largest weight
    assert fig.data[0].z[0, 0] == 255 and fig.data[0].z[1, 1] == 1  # sqrt scale: 0.64 -> top code


def test_untrained_titles_use_the_shared_label() -> None:
    from explorer.core.labels import UNTRAINED

    view = _view()
    said = UNTRAINED.strip(" ()")  # on the title's second line, in small type
    assert said in P.head_heatmap(view, untrained=True).layout.title.text
    assert said in P.link_view(view, untrained=True).layout.title.text
    assert said in P.model_grid(np.zeros((1, 1, 3, 3)), untrained=True).layout.title.text
    assert said not in P.head_heatmap(view).layout.title.text


def test_maps_grid_zooms_to_the_token_range_and_names_the_encoder() -> None:
    att = np.random.default_rng(3).random((2, 3, 10, 10)).astype(np.float32)
    maps = A.AttentionMaps(model="m", tokens=tuple("abcdefghij"), attentions=att, family="encoder-decoder",
                           source_format="square", n_input_tokens=10, untrained=True)
    fig = P.maps_grid(maps, (2, 6))
    assert fig.layout.title.text.startswith("Model view (encoder): every layer x head")
    assert fig.data[0].z.shape == (2 * (4 + 1), 3 * (4 + 1))  # 4 tokens per side, 1-cell gaps
    assert fig.data[0].y[0] == "layer 0 · queries 2" and fig.data[0].x[3] == "head 0 · keys 5"  # text positions
