"""explorer.tasks.packedencoder: a BERT run on packed tokens equals the padded model, on both linear kernels."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import transformers as tf

from explorer.tasks import packedencoder as pe
from explorer.tasks.similarity import mean_pool

BATCH = [[101, 7592, 2088, 102], [101, 102], [101, 2023, 2003, 1037, 2146, 6251, 1012, 102], [101, 1037, 102]]


def _bert(**extra) -> tf.BertModel:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        cfg = tf.BertConfig(vocab_size=8000, hidden_size=48, num_hidden_layers=2, num_attention_heads=3,
                            intermediate_size=96, max_position_embeddings=64, **extra)
        return tf.BertModel(cfg, add_pooling_layer=False).eval()


def _padded_reference(model: torch.nn.Module, ids: list[list[int]]) -> torch.Tensor:
    width = max(map(len, ids))
    input_ids = torch.tensor([x + [0] * (width - len(x)) for x in ids])
    mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids])
    with torch.inference_mode():
        hidden = model(input_ids=input_ids, attention_mask=mask, token_type_ids=torch.zeros_like(input_ids))
    return mean_pool(hidden.last_hidden_state, mask)


def test_pack_places_every_token_once() -> None:
    batch = pe.pack(BATCH, "cpu")
    assert batch.width == 8 and batch.ids.tolist() == [t for x in BATCH for t in x]
    assert batch.lengths.tolist() == [4, 2, 8, 3]
    assert batch.positions.tolist()[:7] == [0, 1, 2, 3, 0, 1, 0]
    assert batch.segment.tolist() == [0] * 4 + [1] * 2 + [2] * 8 + [3] * 3
    assert batch.grid_rows.tolist()[:7] == [0, 1, 2, 3, 8, 9, 16]  # row b * T + position
    assert batch.key_mask.shape == (4, 1, 1, 8) and int(batch.key_mask.sum()) == 17


@pytest.mark.parametrize("act", ["gelu", "relu"])
@pytest.mark.parametrize("onednn", [True, False])
def test_packed_equals_the_padded_model(monkeypatch, act: str, onednn: bool) -> None:
    if onednn and not pe._onednn(torch.zeros(1)):
        pytest.skip("this PyTorch build has no oneDNN linear kernel")
    monkeypatch.setattr(pe, "_onednn", lambda weight: onednn)
    model = _bert(hidden_act=act)
    with torch.inference_mode():
        ours = pe.mean_embeddings(model, pe.pack(BATCH, "cpu"))  # (4, 48)
    ref = _padded_reference(model, BATCH)
    assert ours.shape == (4, 48)
    torch.testing.assert_close(ours, ref, atol=1e-5, rtol=0)
    torch.testing.assert_close(ours.norm(dim=1), torch.ones(4))


def test_prepared_weights_are_made_once_and_leave_the_model_alone() -> None:
    model = _bert()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.inference_mode():
        pe.mean_embeddings(model, pe.pack(BATCH, "cpu"))
        first = pe._prepared(model)
        pe.mean_embeddings(model, pe.pack(BATCH[:2], "cpu"))
    assert pe._prepared(model) is first
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_supports_only_plain_bert_encoders() -> None:
    assert pe.supports(_bert())
    assert not pe.supports(_bert().train())  # dropout would be skipped
    assert not pe.supports(_bert(hidden_act="gelu_new"))
    assert not pe.supports(_bert(is_decoder=True))
    roberta = tf.RobertaModel(tf.RobertaConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1,
                                               num_attention_heads=2, intermediate_size=64)).eval()
    assert not pe.supports(roberta)  # positions start after the padding index
    with torch.device("meta"):
        assert not pe.supports(_bert())  # weights not in memory: only accelerate's hooks can run it


def test_one_sentence_and_a_single_token() -> None:
    model = _bert()
    with torch.inference_mode():
        out = pe.mean_embeddings(model, pe.pack([[101]], "cpu"))
    torch.testing.assert_close(out, _padded_reference(model, [[101]]), atol=1e-5, rtol=0)
    assert F.normalize(out, dim=1).shape == (1, 48)
