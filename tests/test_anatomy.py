"""Anatomy cards: one per catalog model type, their numbers read from configs, unknown types refused in words.

The cards' paths are checked against built models of all 45 catalog variants in tests/test_internals_located.py;
here, the data itself and the numbers it derives from configs."""

from __future__ import annotations

import json

import pytest

from explorer.architecture import anatomy, build, catalog
from explorer.architecture.anatomy.card import Card
from explorer.core.errors import ExplorerError


def test_every_catalog_model_type_has_a_card_and_no_card_is_spare() -> None:
    types = {v.model_type for v in catalog.load_catalog().values()}
    assert len(types) == 23 and set(anatomy.CARDS) == types


@pytest.mark.parametrize("key", ["gpt2", "bert-base", "t5-small", "gemma3-270m", "bert2bert", "albert-base"])
def test_a_card_with_its_numbers_is_json(key: str) -> None:
    config = build.make_config(key) if key != "bert2bert" else build.instantiate(
        build.make_config(key), "bert2bert").config  # the composite config BERT2BERT is built with
    out = json.loads(json.dumps(anatomy.resolved(config).to_dict()))
    assert out["model_type"] == catalog.get_variant(key).model_type and out["stacks"][0]["layers"] >= 6
    assert [s["name"] for s in out["stacks"]] == [s.name for s in anatomy.card_of(config).stacks]


def test_an_unknown_type_is_refused_with_the_known_ones_and_what_to_do() -> None:
    with pytest.raises(ExplorerError, match=r"no anatomy card for model type 'llama'.*gemma3_text.*Pick a catalog"):
        anatomy.card_of({"model_type": "llama"})
    with pytest.raises(ExplorerError, match=r"\(none named\)"):
        anatomy.card_of({})


def test_gemma_3_270m_in_numbers() -> None:
    """Sandwich RMSNorm (1 + w) with qk-norm, one key/value head for four query heads, a 512-token window on 15 of
    its 18 layers, 10k and 1M rotary bases, 1/sqrt(256) from query_pre_attn_scalar, sqrt(640) on the embeddings."""
    r = anatomy.resolved(build.make_config("gemma3-270m"))
    s = r.main
    assert (r.card.norms.placement, r.card.norms.plus_one, r.card.norms.qk_norm) == ("sandwich", True, True)
    assert (s.layers, s.heads, s.kv_heads, s.head_width, s.grouping, s.kv_head_of(3)) == (18, 4, 1, 256, "MQA", 0)
    assert s.layer_kinds.count("local") == 15 and {w for w in s.windows if w} == {512}
    assert s.layer_kinds[5] == "global" and s.windows[5] is None
    assert dict(r.positions.bases) == {"local": 10000.0, "global": 1000000.0}
    assert r.attention_scale == 256 ** -0.5 and r.embed_scale == pytest.approx(640 ** 0.5)
    assert (r.mlp_kind, r.activation, r.tied) == ("gated", "gelu_pytorch_tanh", True)


def test_t5_gpt_j_gpt_neo_deberta_mobilebert_and_bigbird_read_their_own_fields() -> None:
    t5 = anatomy.resolved(build.make_config("t5-small"))
    assert (t5.positions.buckets, t5.positions.max_distance, t5.attention_scale) == (32, 128, 1.0)
    assert t5.logits_rescale == pytest.approx(512 ** -0.5) and t5.card.norms.kind == "rmsnorm"
    assert [s.layer_kinds[0] for s in t5.stacks] == ["full", "causal"]
    gptj = anatomy.resolved(build.make_config("gpt-j"))
    assert (gptj.positions.rotary_dims, gptj.card.residual, gptj.tied) == (64, "parallel", False)
    neo = anatomy.resolved(build.make_config("gpt-neo"))
    assert neo.main.layer_kinds[:2] == ("global", "local") and neo.main.windows[:2] == (None, 256)
    assert neo.attention_scale == 1.0  # GPT-Neo does not scale its scores
    deberta = anatomy.resolved(build.make_config("deberta-v3-base"))
    assert deberta.positions.kind == "disentangled" and deberta.positions.position_buckets == 256
    assert deberta.attention_scale == pytest.approx((64 * 3) ** -0.5)  # c2p and p2c: three terms
    mobile = anatomy.resolved(build.make_config("mobilebert"))
    assert (mobile.stacked_mlps, mobile.bottleneck, mobile.card.norms.kind) == (4, 128, "affine")
    assert anatomy.resolved(build.make_config("bigbird")).block_sparse == (64, 3)


def test_a_gated_t5_and_a_raw_config_dict_resolve_too() -> None:
    gated = anatomy.resolved({"model_type": "t5", "d_model": 64, "d_kv": 16, "num_heads": 4, "num_layers": 2,
                              "d_ff": 96, "feed_forward_proj": "gated-gelu"})
    assert (gated.mlp_kind, gated.activation, gated.stacks[1].layers) == ("gated", "gelu_new", 2)
    old_gemma = anatomy.resolved({"model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 6,
                                  "num_attention_heads": 4, "head_dim": 16, "rope_theta": 1e6,
                                  "rope_local_base_freq": 1e4, "sliding_window_pattern": 3, "sliding_window": 8})
    assert old_gemma.main.layer_kinds == ("local", "local", "global") * 2
    assert dict(old_gemma.positions.bases) == {"global": 1e6, "local": 1e4}


def test_cards_are_frozen_data() -> None:
    card = anatomy.card_of("bert")
    assert isinstance(card, Card) and card.main is card.stacks[-1]
    with pytest.raises(AttributeError):
        card.label = "x"  # type: ignore[misc]
