"""explorer.architecture.components: every parameter gets one category, and the categories sum to the total."""

from __future__ import annotations

import functools

import pytest

from explorer.architecture import analysis, catalog, components, layertree
from tests.reference_configs import meta_model


@functools.cache
def _analysed(key: str) -> analysis.Analysis:
    return analysis.analyse_variant(key, seq_len=16)


@pytest.mark.parametrize("key", ["bert-base", "t5-small", "albert-base", "bart-base", "deberta-v3-base",
                                 "longformer", "gpt2", "electra-small", "colbert", "bert2bert", "gemma3-270m"])
def test_categories_partition_the_total_exactly(key: str) -> None:
    a = _analysed(key)
    assert sum(a.components.values()) == a.params
    assert all(v > 0 for v in a.components.values())


def test_named_categories() -> None:
    assert components.categorize("bert.embeddings.word_embeddings.weight", "Embedding") == "token embeddings"
    assert components.categorize("bert.encoder.layer.0.attention.self.query.weight", "Linear") == "attention Q/K/V/O"
    assert components.categorize("bert.encoder.layer.0.intermediate.dense.weight", "Linear") == "feed-forward"
    assert components.categorize("bert.encoder.layer.0.output.LayerNorm.weight", "LayerNorm") == "layer norms"
    cross = components.categorize("decoder.block.0.layer.1.EncDecAttention.q.weight", "Linear", True)
    assert cross == "cross-attention"
    assert set(components.ORDER) >= {"token embeddings", "attention Q/K/V/O", "feed-forward", "layer norms"}


def test_categorize_prefers_heads_over_inner_layer_norms() -> None:
    assert components.categorize("cls.predictions.transform.LayerNorm.weight", "LayerNorm") == "head: MLM"
    assert components.categorize("lm_head.weight", "Linear", decoderish=True) == "head: LM"


def test_every_catalog_variant_is_categorised() -> None:
    assert len(catalog.keys()) >= 44


@pytest.mark.parametrize("name", ["bert-base-uncased", "albert-base-v2", "t5-small", "gpt2",
                                  "microsoft__deberta-v3-base", "distilbert-base-uncased"])
def test_breakdown_partitions_the_tree_root(name: str) -> None:
    model, config = meta_model(name)
    parts = components.breakdown(model, config)
    assert layertree.layer_tree(model, config).params == sum(parts.values()) and "other" not in parts


def test_breakdown_covers_bert_exactly() -> None:
    model, config = meta_model("bert-base-uncased", "pretraining")
    parts = components.breakdown(model, config)
    assert parts["token embeddings"] == 30522 * 768
    assert parts["position embeddings"] == 512 * 768
    assert parts["token-type embeddings"] == 2 * 768
    assert parts["attention Q/K/V/O"] == 12 * 4 * (768 * 768 + 768)
    assert parts["feed-forward"] == 12 * (2 * 768 * 3072 + 3072 + 768)
    assert parts["pooler"] == 768 * 768 + 768
    assert parts["head: NSP/SOP"] == 2 * 768 + 2


def test_breakdown_finds_t5_relative_bias_and_cross_attention() -> None:
    model, config = meta_model("t5-small")
    parts = components.breakdown(model, config)
    assert parts["relative position"] == 2 * 32 * 8  # one bias table per stack
    assert parts["cross-attention"] == 6 * 4 * 512 * 512
