"""explorer.architecture.build: configs, overrides, validation, sizes refused before building, heads instantiated."""

from __future__ import annotations

import json

import pytest

from explorer.architecture import build, custom_models
from explorer.core.errors import ExplorerError

TINY = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
            max_position_embeddings=64)


def test_config_from_dict_needs_model_type() -> None:
    with pytest.raises(ExplorerError, match="model_type"):
        build.config_from_dict({"hidden_size": 8})


def test_unknown_model_type_is_a_clear_error() -> None:
    with pytest.raises(ExplorerError, match="Unknown model_type"):
        build.config_from_dict({"model_type": "not-a-model"})


@pytest.mark.parametrize("text", [b"{not json", b"[1, 2]", b"\xff\xfe", b""])
def test_malformed_upload_is_a_clear_error(text: bytes) -> None:
    with pytest.raises(ExplorerError):
        build.parse_config_json(text)


def test_hidden_not_divisible_by_heads_suggests_a_fix() -> None:
    config = build.config_from_dict({"model_type": "bert", **TINY, "num_attention_heads": 5})
    with pytest.raises(ExplorerError, match="not divisible by 5 heads"):
        build.instantiate(config, "base")


@pytest.mark.parametrize("knob", ["num_hidden_layers", "num_attention_heads", "hidden_size"])
def test_zero_is_rejected(knob: str) -> None:
    config = build.config_from_dict({"model_type": "bert", **TINY})
    with pytest.raises(ExplorerError, match="at least 1"):
        build.apply_overrides(config, {knob: 0})


def test_overrides_change_both_stacks_of_an_encoder_decoder() -> None:
    config = build.config_from_dict({"model_type": "t5", "d_model": 32, "d_ff": 64, "num_layers": 2,
                                     "num_heads": 2, "d_kv": 16, "vocab_size": 100})
    changed = build.apply_overrides(config, {"num_hidden_layers": 3, "intermediate_size": 48})
    assert (changed.num_layers, changed.num_decoder_layers, changed.d_ff) == (3, 3, 48)
    assert config.num_layers == 2  # the original is untouched


def test_override_of_a_missing_knob_says_so() -> None:
    config = build.config_from_dict({"model_type": "bert", **TINY})
    with pytest.raises(ExplorerError, match="no embedding size"):
        build.apply_overrides(config, {"embedding_size": 16})


def test_numpy_and_float_sizes_are_cast() -> None:
    import numpy as np

    config = build.config_from_dict({"model_type": "bert", **TINY})
    changed = build.apply_overrides(config, {"hidden_size": np.int64(64), "num_attention_heads": 4.0})
    assert changed.hidden_size == 64 and isinstance(changed.hidden_size, int)


def test_meta_build_allocates_nothing() -> None:
    config = build.config_from_dict({"model_type": "bert", **TINY})
    model = build.instantiate(config, "mlm")
    assert all(p.device.type == "meta" for p in model.parameters())


def test_share_all_layers_counts_one_block() -> None:
    config = build.config_from_dict({"model_type": "bert", **TINY, "num_hidden_layers": 4})
    plain = build.instantiate(config, "base").num_parameters()
    shared = build.share_all_layers(build.instantiate(config, "base")).num_parameters()
    block = (plain - shared) // 3
    assert shared == plain - 3 * block and block > 0


def test_upload_roundtrip_from_json_text() -> None:
    text = json.dumps({"model_type": "gpt2", "n_layer": 2, "n_embd": 32, "n_head": 4, "vocab_size": 50})
    config = build.parse_config_json(text)
    assert build.default_head(config) in ("pretraining", "causal-lm")


def test_absurd_layer_counts_are_refused_before_building() -> None:
    with pytest.raises(ExplorerError, match="num_hidden_layers is 100,000; it must be a whole number from 1 to 512"):
        build.config_from_dict({"model_type": "bert", **TINY, "num_hidden_layers": 100_000})
    config = build.config_from_dict({"model_type": "bert", **TINY})
    with pytest.raises(ExplorerError, match="num_hidden_layers"):  # overrides are checked the same way
        build.instantiate(build.apply_overrides(config, {"num_hidden_layers": 100_000}), "base")


def test_real_allocation_is_refused_over_the_memory_budget(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.001")
    config = build.config_from_dict({"model_type": "bert", "num_hidden_layers": 2})
    with pytest.raises(ExplorerError, match=r"needs about 0\.\d GB .* allows 0\.0 GB"):
        build.instantiate(config, "base", device="cpu")
    assert build.instantiate(config, "base").num_parameters() > 0  # meta costs nothing: always allowed


@pytest.mark.parametrize("data,needle", [
    ({"model_type": "t5", "feed_forward_proj": "x-y-z"}, "feed_forward_proj"),
    ({"model_type": "bert", "rope_scaling": 5}, "rope"),
    ({"model_type": "encoder-decoder", "encoder": 5, "decoder": 3}, "encoder"),
])
def test_fields_transformers_validators_refuse_are_one_line_messages(data, needle) -> None:
    with pytest.raises(ExplorerError, match=needle) as info:
        build.config_from_dict(data)
    assert "\n" not in str(info.value)


def test_a_bug_inside_a_build_is_not_turned_into_advice(monkeypatch) -> None:
    def broken(config, extra):
        raise AttributeError("a bug, not a bad config")

    monkeypatch.setitem(custom_models.CUSTOM, "sentence-bert", broken)
    with pytest.raises(AttributeError, match="a bug"):
        build.instantiate(build.make_config("bert-base"), "sentence-bert")
