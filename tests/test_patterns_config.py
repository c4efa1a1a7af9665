"""explorer.architecture.patterns.config: published configs -> the pattern of each layer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.architecture import patterns as P
from explorer.architecture.patterns import config


def _cfg(key: str) -> dict:
    from explorer.architecture import catalog

    return catalog.variant_config(key)


def test_gpt_neo_and_gpt3_alternate_global_and_local_layers() -> None:
    for key in ("gpt-neo", "gpt3"):
        cfg = _cfg(key)
        kinds = config.alternating_layers(cfg)
        vps = [P.pattern_for_variant(key, 1024, layer) for layer in range(4)]
        for layer, vp in enumerate(vps):
            expected = "local-causal" if kinds[layer] == "local" else "causal"
            assert vp.spec.kind == expected, (key, layer)
        local = next(vp for vp in vps if vp.spec.kind == "local-causal")
        assert local.spec.window == cfg["window_size"]
        assert vps[0].n_layers == len(kinds)
    assert {"global", "local"} <= set(config.alternating_layers(_cfg("gpt-neo")))


def test_max_positions_uses_the_shared_position_offset() -> None:
    from explorer.architecture import catalog

    for key, offset in (("roberta-base", 2), ("longformer", 2), ("bert-base", 0), ("bigbird-pegasus", 0)):
        cfg = _cfg(key)
        assert config.max_positions(catalog.get_variant(key), cfg) == cfg["max_position_embeddings"] - offset, key
    assert config.max_positions(catalog.get_variant("t5-base"), _cfg("t5-base")) is None  # relative positions


def test_head_dim_reads_every_spelling() -> None:
    assert config.head_dim({"d_kv": 64, "d_model": 512}) == 64
    assert config.head_dim({"n_embd": 768, "n_head": 12}) == 64
    assert config.head_dim({}) == 64


@pytest.mark.parametrize(("key", "width"), [("gemma3-270m", 256), ("mobilebert", 32), ("t5-11b", 128)])
def test_head_dim_is_the_stated_width_not_hidden_over_heads(key: str, width: int) -> None:
    """Gemma states head_dim (4 x 256 against a 640-wide stream), T5 d_kv, MobileBERT runs attention in its
    128-wide bottleneck: the pattern's d_head (and its FLOPs) must use those, as the cost model does."""
    cfg = json.loads((Path("assets/configs") / f"{key}.json").read_text())
    assert config.head_dim(cfg) == width


def test_self_attention_spec_follows_bigbird_and_refuses_unknown_attention() -> None:
    from explorer.core.errors import ExplorerError

    cfg = {"hidden_size": 768, "num_attention_heads": 12, "block_size": 64, "num_random_blocks": 3}
    assert config.self_attention_spec("block-sparse", cfg, 0, 704, (), 0, 1)[0] == "full (short-input fallback)"
    assert config.self_attention_spec("block-sparse", cfg, 0, 705, (), 0, 1)[0] == "block-sparse"
    full_cfg = {**cfg, "attention_type": "original_full"}
    assert config.self_attention_spec("block-sparse", full_cfg, 0, 4096, (), 0, 1)[1].kind == "full"
    with pytest.raises(ExplorerError, match="No pattern is known"):
        config.self_attention_spec("hashing", cfg, 0, 64, (), 0, 1)
    with pytest.raises(ExplorerError, match="attention_types"):
        config.alternating_layers({})


def test_gemma3_local_and_global_layers_come_from_its_layer_types() -> None:
    from explorer.architecture import catalog
    from explorer.architecture.patterns import config

    cfg = catalog.variant_config("gemma3-270m")
    kinds = config.alternating_layers(cfg)
    assert kinds == ["global" if t == "full_attention" else "local" for t in cfg["layer_types"]]
    assert kinds.count("local") == 15 and kinds.count("global") == 3  # five local to one global
    label, spec = config.self_attention_spec("local-global-alternating", cfg, 0, 2048, (), 0, 1)
    assert label == "local (window 512)" and spec.kind == "local-causal" and spec.window == cfg["sliding_window"]
    label, spec = config.self_attention_spec("local-global-alternating", cfg, 5, 2048, (), 0, 1)
    assert label == "global (causal)" and spec.kind == "causal"
