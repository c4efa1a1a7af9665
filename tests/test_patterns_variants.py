"""explorer.architecture.patterns.variants: catalogued variants' patterns, parts, limits and cost curves."""

from __future__ import annotations

import pytest

from explorer.architecture import patterns as P
from explorer.architecture.patterns import masks, variants
from explorer.core.errors import ExplorerError


def _cfg(key: str) -> dict:
    from explorer.architecture import catalog

    return catalog.variant_config(key)


def test_longformer_uses_its_per_layer_window_and_cls_global() -> None:
    cfg = _cfg("longformer")
    vp = P.pattern_for_variant("longformer", 2048, layer=3, global_positions=(7,))
    assert vp.spec.kind == "sliding-window"
    assert vp.spec.window == cfg["attention_window"][3]
    assert vp.spec.global_positions == (0, 7)  # [CLS] always, plus the user's pick
    assert vp.n_layers == len(cfg["attention_window"])
    assert vp.max_positions == cfg["max_position_embeddings"] - 2  # RoBERTa-style padding offset
    assert vp.stats.nnz == masks.nnz_from_mask(vp.spec)


def test_bigbird_uses_its_config_and_falls_back_when_short() -> None:
    cfg = _cfg("bigbird")
    b, r = cfg["block_size"], cfg["num_random_blocks"]
    limit = (5 + 2 * r) * b
    short = P.pattern_for_variant("bigbird", limit)
    long_ = P.pattern_for_variant("bigbird", limit + 1, seed=3)
    assert short.stats.effective_kind == "full" and short.stats.density == 1.0
    assert long_.stats.effective_kind == "block-sparse" and long_.spec.block_size == b
    assert long_.spec.num_random_blocks == r and long_.spec.seed == 3
    assert long_.stats.nnz == masks.nnz_from_mask(long_.spec)


def test_encoder_decoder_parts() -> None:
    enc = P.pattern_for_variant("t5-base", 300, part="encoder")
    dec = P.pattern_for_variant("t5-base", 300, part="decoder", dec_len=40)
    crs = P.pattern_for_variant("t5-base", 300, part="cross", dec_len=40)
    assert (enc.spec.kind, dec.spec.kind, crs.spec.kind) == ("full", "causal", "cross")
    assert (crs.spec.q_len, crs.spec.k_len) == (40, 300) and crs.stats.nnz == 40 * 300
    assert P.pattern_for_variant("t5-base", 300).part == "encoder"
    peg = P.pattern_for_variant("bigbird-pegasus", 2048)
    assert peg.spec.kind == "block-sparse" and peg.stats.effective_kind == "block-sparse"
    assert P.pattern_for_variant("bigbird-pegasus", 2048, part="decoder").spec.kind == "causal"


def test_variant_to_dict_has_the_cli_fields() -> None:
    d = P.pattern_for_variant("bert-base", 512).to_dict()
    assert d["kind"] == "full" and d["nnz"] == 512 * 512 and d["density"] == 1.0
    assert d["score_memory_bytes"] == 4 * 512 * 512
    assert d["spec"]["q_len"] == 512


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: P.pattern_for_variant("bert-base", 513), "at most 512 tokens"),
        (lambda: P.pattern_for_variant("gpt2", 2000), "at most 1,024 tokens"),
        (lambda: P.pattern_for_variant("bert-base", 0), "between 1 and"),
        (lambda: P.pattern_for_variant("bert-bsae", 128), "Unknown variant"),
        (lambda: P.pattern_for_variant("bert-base", 128, layer=12), "layer 12 does not exist"),
        (lambda: P.pattern_for_variant("bert-base", 128, part="cross"), "no cross attention"),
        (lambda: P.pattern_for_variant("t5-base", 128, part="middle"), "Unknown part"),
        (lambda: P.pattern_for_variant("longformer", 128, global_positions=(200,)), "outside the sequence"),
    ],
)
def test_variant_bad_arguments(call, match: str) -> None:
    with pytest.raises(ExplorerError, match=match):
        call()


def test_beyond_max_positions_can_be_drawn_when_asked() -> None:
    vp = P.pattern_for_variant("bert-base", 1024, allow_beyond_max=True)
    assert vp.beyond_max_positions and vp.max_positions == 512


def test_variant_cost_curves() -> None:
    bert = P.variant_cost_curve("bert-base", (1024, 2048))
    bird = P.variant_cost_curve("bigbird", (512, 1024, 2048))
    neo_mean = P.variant_cost_curve("gpt-neo", (2048,))
    neo_local = P.variant_cost_curve("gpt-neo", (2048,), layer=1)
    assert bert.nnz[1] / bert.nnz[0] == 4.0 and bert.max_positions == 512
    assert bird.density[0] == 1.0 and bird.density[2] < bird.density[1] < 1.0  # fallback, then sparse
    assert neo_local.nnz[0] < neo_mean.nnz[0]  # the global layers dominate the mean
    assert neo_mean.label == P.pattern_for_variant("gpt-neo", 8).name


def test_every_supported_variant_has_a_pattern() -> None:
    supported = variants.supported_variants()
    assert {"bert-base", "gpt2", "longformer", "bigbird", "gpt-neo", "t5-base"} <= set(supported)
    for key in supported:
        vp = P.pattern_for_variant(key, 256, allow_beyond_max=True)
        assert vp.stats.nnz == masks.nnz_from_mask(vp.spec), key


def test_diagram_plan_picks_parts_and_clips_layers() -> None:
    plan = variants.diagram_plan(("gpt-neo", "t5-base", "bert-base"), ("decoder", "cross"), layer=30)
    n_neo = variants.variant_layers("gpt-neo")
    assert plan == (("gpt-neo", "auto", n_neo - 1), ("t5-base", "decoder", 0), ("t5-base", "cross", 0),
                    ("bert-base", "auto", 11))
    assert variants.diagram_plan(("t5-base",), (), 2) == (("t5-base", "encoder", 2),)  # no part picked: encoder
    assert variants.diagram_plan((), ("encoder",), 0) == ()


def test_variant_layers() -> None:
    assert variants.variant_layers("bert-base") == 12
    assert variants.variant_layers("t5-small", "decoder") == _cfg("t5-small")["num_layers"] == 6  # decoder = encoder
    assert variants.variant_layers("longformer") == len(_cfg("longformer")["attention_window"])
    with pytest.raises(ExplorerError, match="no decoder attention"):
        variants.variant_layers("bert-base", "decoder")


def test_layer_count_reads_every_spelling_and_draws_at_least_one_layer() -> None:
    from types import SimpleNamespace

    plain = SimpleNamespace(attention="full")
    assert variants.layer_count(plain, {"n_layer": 24}, "encoder") == 24  # the spellings: tests/test_modeltypes.py
    assert variants.layer_count(plain, {"num_layers": 6, "num_decoder_layers": 3}, "decoder") == 3
    assert variants.layer_count(plain, {}, "encoder") == variants.layer_count(plain, {}, "cross") == 1
