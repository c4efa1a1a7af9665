"""explorer.architecture.components: every parameter gets one category, and the categories sum to the total."""

from __future__ import annotations

import functools

import pytest

from explorer.architecture import analysis, catalog, components


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
    assert components.categorize("decoder.block.0.layer.1.EncDecAttention.q.weight", "Linear", True) == "cross-attention"
    assert set(components.ORDER) >= {"token embeddings", "attention Q/K/V/O", "feed-forward", "layer norms"}


def test_categorize_prefers_heads_over_inner_layer_norms() -> None:
    assert components.categorize("cls.predictions.transform.LayerNorm.weight", "LayerNorm") == "head: MLM"
    assert components.categorize("lm_head.weight", "Linear", decoderish=True) == "head: LM"


def test_every_catalog_variant_is_categorised() -> None:
    assert len(catalog.keys()) >= 44
