"""explorer.architecture.analysis: one model's whole analysis, consistent with its parts."""

from __future__ import annotations

from explorer.architecture import analysis, build


def test_variant_analysis_is_consistent() -> None:
    a = analysis.analyse_variant("albert-base", seq_len=16)
    assert a.params == sum(a.components.values()) == a.tree.params
    assert a.base_params <= a.params
    assert a.shared_blocks and a.memory["fp32"] == 4 * a.params
    d = a.to_dict()
    assert d["key"] == "albert-base" and d["flops_per_token"]["seq_len"] == 16


def test_config_analysis_with_overrides_and_tied_weights() -> None:
    config = build.config_from_dict({"model_type": "bert", "num_hidden_layers": 2, "hidden_size": 64,
                                     "num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 100})
    a = analysis.analyse_config(config, name="tiny", seq_len=8)
    assert a.name == "tiny" and a.params == sum(a.components.values())
    assert any("decoder" in t for t in a.tied)  # the MLM decoder is tied to the input embeddings: counted once


def test_base_params_of_variant_matches_published_order_of_magnitude() -> None:
    assert 100_000_000 < analysis.base_params_of_variant("bert-base") < 115_000_000
