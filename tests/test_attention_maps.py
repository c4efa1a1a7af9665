"""explorer.tasks.attention.maps: the result's shapes, truncation flag and JSON (notice texts only)."""

from __future__ import annotations

import json

import numpy as np

from explorer.core.notices import Notice
from explorer.tasks import attention as A


def _maps(**kw) -> A.AttentionMaps:
    base = {"model": "m", "tokens": ("a", "b", "c"), "attentions": np.zeros((2, 4, 3, 3), np.float32),
            "family": "encoder", "source_format": "square", "n_input_tokens": 3}
    return A.AttentionMaps(**{**base, **kw})


def test_shapes_and_truncation() -> None:
    maps = _maps()
    assert (maps.n_layers, maps.n_heads, maps.truncated) == (2, 4, False)
    assert _maps(n_input_tokens=10).truncated


def test_to_dict_keeps_notice_texts_and_is_json() -> None:
    notes = (Notice("truncated", "Cut."), Notice("untrained", "Random <b>weights</b>."))
    d = _maps(notices=notes, untrained=True).to_dict()
    assert d["notices"] == ["Cut.", "Random <b>weights</b>."] and d["untrained"] is True
    assert d["shape"] == [2, 4, 3, 3] and "cross_shape" not in d
    json.dumps(d)  # plain types only


def test_encoder_decoder_shapes_in_json() -> None:
    d = _maps(family="encoder-decoder", decoder_tokens=("x", "y"),
              decoder_attentions=np.zeros((3, 4, 2, 2), np.float32),
              cross_attentions=np.zeros((3, 4, 2, 3), np.float32)).to_dict()
    assert d["decoder_tokens"] == ["x", "y"] and d["decoder_shape"] == [3, 4, 2, 2] and d["cross_shape"] == [3, 4, 2, 3]
