"""explorer.architecture.custom_models: Sentence-BERT, ColBERT, FastBERT, SpanBERT, StructBERT, ELECTRA pair,
BERT2BERT run."""

from __future__ import annotations

import pytest
import torch
from transformers import BertConfig, ElectraConfig

from explorer.architecture import build, custom_models

TINY = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
            max_position_embeddings=64)


def _tiny_bert(**kw) -> BertConfig:
    return BertConfig(**{**TINY, **kw})


@pytest.mark.parametrize("head", ["sentence-bert", "colbert", "fastbert", "spanbert", "structbert", "bert2bert"])
def test_custom_variants_run_on_cpu(head: str) -> None:
    torch.manual_seed(0)
    model = build.instantiate(_tiny_bert(), head, device="cpu", extra={"dim": 16}).eval()
    ids = torch.randint(5, 99, (2, 7))
    with torch.no_grad():
        out = model(input_ids=ids, decoder_input_ids=ids) if head == "bert2bert" else model(input_ids=ids)
    assert out is not None


def test_sentence_bert_pools_and_normalises() -> None:
    model = build.instantiate(_tiny_bert(), "sentence-bert", device="cpu").eval()
    with torch.no_grad():
        emb = model(torch.randint(5, 99, (3, 6)))
    assert emb.shape == (3, 32)
    assert torch.allclose(emb.norm(dim=-1), torch.ones(3), atol=1e-5)


def test_colbert_projects_every_token_without_bias() -> None:
    model = build.instantiate(_tiny_bert(), "colbert", device="cpu", extra={"dim": 16}).eval()
    assert model.colbert_projection.bias is None
    with torch.no_grad():
        assert model(torch.randint(5, 99, (2, 9))).shape == (2, 9, 16)


def test_fastbert_has_one_exit_per_layer() -> None:
    model = build.instantiate(_tiny_bert(num_hidden_layers=3), "fastbert", device="cpu").eval()
    with torch.no_grad():
        assert model(torch.randint(5, 99, (2, 5))).shape == (2, 3, 2)


def test_structbert_sentence_head_is_three_way() -> None:
    model = build.instantiate(_tiny_bert(), "structbert")
    assert model.bert.cls.seq_relationship.out_features == 3


def test_electra_pair_shares_token_embeddings() -> None:
    small = dict(vocab_size=99, embedding_size=16, max_position_embeddings=64)
    gen = ElectraConfig(**small, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    disc = ElectraConfig(**small, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
    pair = custom_models.ElectraPair(gen, disc)
    separate = sum(m.num_parameters() for m in (pair.generator, pair.discriminator))
    shared = 99 * 16 + 64 * 16  # token + position tables counted once
    assert pair.generator.electra.embeddings.word_embeddings is pair.discriminator.electra.embeddings.word_embeddings
    assert sum(p.numel() for p in pair.parameters()) == separate - shared
