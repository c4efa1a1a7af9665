"""Lab models: catalog configs scaled down by the explorer's knobs, lab special ids, seeded init."""

from __future__ import annotations

import torch

from explorer.training import models, recipes


def test_tiny_models_take_the_knobs_and_the_lab_vocabulary() -> None:
    m = models.build(recipes.get("albert"), "tiny", seed=0)
    assert m.config.vocab_size == 8192 and m.config.hidden_size == 128 and m.config.embedding_size == 64
    assert m.config.pad_token_id == 0 and m.training


def test_the_same_seed_gives_the_same_weights() -> None:
    a, b = (models.build(recipes.get("mlm"), "tiny", seed=5) for _ in range(2))
    c = models.build(recipes.get("mlm"), "tiny", seed=6)
    wa, wb, wc = (m.bert.embeddings.word_embeddings.weight for m in (a, b, c))
    assert torch.equal(wa, wb) and not torch.equal(wa, wc)


def test_albert_shares_layers_and_is_smaller_than_bert_of_the_same_width() -> None:
    bert = models.parameters(models.build(recipes.get("bert"), "tiny", 0))
    albert = models.parameters(models.build(recipes.get("albert"), "tiny", 0))
    assert albert < 0.7 * bert
