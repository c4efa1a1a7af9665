"""Attention-pattern masks: closed-form counts against the masks, and each kind's structural rules."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import patterns as P
from explorer.errors import ExplorerError

FAST = settings(max_examples=40, deadline=None)


def _check_counts(spec: P.PatternSpec) -> np.ndarray:
    """Whole mask == streamed chunks == closed form; returns the mask."""
    mask = P.build_mask(spec)
    assert mask.shape == (spec.q_len, spec.k_len) and mask.dtype == bool
    assert int(mask.sum()) == P.nnz_closed_form(spec) == P.nnz_from_mask(spec)
    return mask


# --- closed form == mask, for every kind ---------------------------------------------------------


@FAST
@given(t=st.integers(1, 300))
def test_full_and_causal_counts(t: int) -> None:
    assert _check_counts(P.full(t)).all()
    mask = _check_counts(P.causal(t))
    assert P.nnz_closed_form(P.causal(t)) == t * (t + 1) // 2
    assert not np.triu(mask, 1).any(), "a causal row sees the future"
    assert mask[np.tril_indices(t)].all(), "a causal row misses a past token"


@FAST
@given(q=st.integers(1, 120), k=st.integers(1, 120))
def test_cross_attention_is_a_full_rectangle(q: int, k: int) -> None:
    mask = _check_counts(P.cross(q, k))
    assert mask.shape == (q, k) and mask.all()


@FAST
@given(t=st.integers(1, 300), w=st.integers(1, 80))
def test_local_causal_window(t: int, w: int) -> None:
    mask = _check_counts(P.local_causal(t, w))
    assert not np.triu(mask, 1).any()
    assert (mask.sum(axis=1) == np.minimum(np.arange(t) + 1, w)).all()  # row i sees min(i+1, w) keys


@FAST
@given(
    t=st.integers(1, 300), half=st.integers(1, 40), dilation=st.integers(1, 4),
    globals_=st.lists(st.integers(0, 299), max_size=6),
)
def test_sliding_window_with_globals_and_dilation(t: int, half: int, dilation: int, globals_: list[int]) -> None:
    glob = tuple(p for p in globals_ if p < t)
    spec = P.sliding_window(t, 2 * half, glob, dilation)
    mask = _check_counts(spec)
    assert (mask == mask.T).all(), "the window is not symmetric"
    for p in glob:
        assert mask[p].all() and mask[:, p].all(), "a global row/column is not full"
    others = np.setdiff1d(np.arange(t), glob)
    if others.size:  # non-global pairs: exactly the dilated band
        i, j = np.meshgrid(others, others, indexing="ij")
        band = (np.abs(i - j) <= half * dilation) & ((i - j) % dilation == 0)
        assert (mask[np.ix_(others, others)] == band).all()


@settings(max_examples=25, deadline=None)
@given(n_blocks=st.integers(6, 24), b=st.sampled_from([2, 3, 8, 16]), r=st.integers(0, 3),
       cut=st.integers(0, 15), seed=st.integers(0, 10_000))
def test_block_sparse_counts_including_padding(n_blocks: int, b: int, r: int, cut: int, seed: int) -> None:
    t = max(1, n_blocks * b - cut % b)  # lengths that are not multiples of block_size get padded
    _check_counts(P.block_sparse(t, b, r, seed))


# --- BigBird structure -----------------------------------------------------------------------------


def test_bigbird_fallback_rule_matches_transformers() -> None:
    # BigBirdModel.forward: seq_length <= (5 + 2 * num_random_blocks) * block_size -> original_full
    assert P.bigbird_falls_back(704, 64, 3) and not P.bigbird_falls_back(705, 64, 3)
    short, long_ = P.block_sparse(704, 64, 3), P.block_sparse(705, 64, 3)
    assert P.effective_kind(short) == "full" and P.build_mask(short).all()
    assert P.effective_kind(long_) == "block-sparse" and not P.build_mask(long_).all()
    assert "falls back to full" in P.describe(short)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_bigbird_block_layout_rules(seed: int) -> None:
    spec = P.block_sparse(64 * 20, 64, 3, seed)
    layout = P.bigbird_block_layout(spec)
    n = layout.shape[0]
    assert n == 20
    assert layout[[0, -1]].all() and layout[:, [0, -1]].all(), "global blocks must be full"
    rand = P.bigbird_random_blocks(n, 3, seed)
    for i in range(1, n - 1):
        window = {i - 1, i, i + 1}
        assert all(layout[i, c] for c in window)
        picked = set(rand[i - 1].tolist())
        assert len(picked) == 3 and not picked & (window | {0, n - 1}), "random block overlaps window/global"
        outside = {c for c in range(n) if layout[i, c]} - window - {0, n - 1}
        assert outside == picked, "row has other blocks than its random picks"
    # tokens inherit the block layout
    mask = P.build_mask(spec)
    assert (mask[::64, ::64] == layout).all()


def test_bigbird_random_blocks_are_seeded() -> None:
    a, b = P.bigbird_random_blocks(30, 3, 5), P.bigbird_random_blocks(30, 3, 5)
    assert (a == b).all()
    assert not (a == P.bigbird_random_blocks(30, 3, 6)).all()
    with pytest.raises(ValueError):
        a[0, 0] = 1  # the cached array is read-only


def test_bigbird_needs_enough_middle_blocks() -> None:
    with pytest.raises(ExplorerError, match="random candidates"):
        P.bigbird_random_blocks(6, 3, 0)


# --- costs, pooling, validation ------------------------------------------------------------------


def test_stats_memory_and_flops() -> None:
    s = P.pattern_stats(P.full(512, d_head=64))
    assert s.nnz == 512 * 512 and s.density == 1.0
    assert s.score_memory_bytes == s.dense_score_memory_bytes == 4 * 512 * 512
    assert s.flops == 4 * 64 * 512 * 512
    c = P.pattern_stats(P.causal(512))
    assert c.score_memory_bytes == 4 * 512 * 513 // 2 and c.dense_score_memory_bytes == 4 * 512 * 512
    assert set(s.to_dict()) >= {"kind", "nnz", "density", "score_memory_bytes"}


def test_cost_curve_quadratic_vs_linear() -> None:
    lengths = (1024, 2048, 4096, 8192, 16_384)
    full = P.cost_curve(P.full(8), lengths)
    band = P.cost_curve(P.sliding_window(8, 512, (0,)), lengths)
    bird = P.cost_curve(P.block_sparse(8, 64, 3), lengths)
    assert full.nnz[-1] / full.nnz[-2] == 4.0  # doubling T quadruples full attention
    assert 1.9 < band.nnz[-1] / band.nnz[-2] < 2.1  # ... and doubles a window
    assert 1.9 < bird.nnz[-1] / bird.nnz[-2] < 2.1
    assert full.to_dict()["lengths"] == list(lengths)


def test_cost_curve_averages_layers() -> None:
    lengths = (4096,)
    neo = P.cost_curve([P.causal(8), P.local_causal(8, 256)], lengths)
    expected = (P.nnz_closed_form(P.causal(4096)) + P.nnz_closed_form(P.local_causal(4096, 256))) / 2
    assert neo.nnz == (expected,)


def test_default_lengths_span_512_to_16k() -> None:
    lengths = P.default_lengths()
    assert lengths[0] == 512 and lengths[-1] == 16_384 and list(lengths) == sorted(set(lengths))


def test_pooled_mask_is_exact_when_small_and_max_pools_when_large() -> None:
    spec = P.sliding_window(300, 16, (0, 150))
    pooled, f = P.pooled_mask(spec)
    assert f == 1 and (pooled == P.build_mask(spec)).all()
    big = P.sliding_window(4100, 16, (0,))
    pooled, f = P.pooled_mask(big, max_cells=512)
    assert f == 9 and pooled.shape == (456, 456)
    mask = P.build_mask(big)
    padded = np.pad(mask, ((0, 456 * 9 - 4100),) * 2)
    assert (pooled == padded.reshape(456, 9, 456, 9).any(axis=(1, 3))).all()


def test_mask_view_counts_while_pooling_and_stats_follow_the_count() -> None:
    spec = P.sliding_window(3000, 64, (0, 9), dilation=2)
    view = P.mask_view(spec, 256)
    assert view.nnz_counted == P.nnz_closed_form(spec) and view.factor == 12
    counted = P.pattern_stats(spec, nnz=view.nnz_counted)
    assert counted == P.pattern_stats(spec)  # memory and FLOPs from the mask == closed form
    assert P.pattern_stats(spec, nnz=10).score_memory_bytes == 40


def test_long_masks_are_counted_without_building_them() -> None:
    spec = P.block_sparse(16_384, 64, 3)
    with pytest.raises(ExplorerError, match="too large"):
        P.build_mask(spec)
    assert P.nnz_from_mask(spec) == P.nnz_closed_form(spec)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: P.full(0), "between 1 and"),
        (lambda: P.causal(10**9), "between 1 and"),
        (lambda: P.full(12.5), "whole number"),
        (lambda: P.sliding_window(100, 7), "even"),
        (lambda: P.sliding_window(100, 8, (0, 100)), "outside the sequence"),
        (lambda: P.local_causal(10, 0), "at least 1"),
        (lambda: P.sliding_window(100, 8, (0,), dilation=0), "Dilation"),
        (lambda: P.block_sparse(100, 0, 3), "block_size"),
        (lambda: P.PatternSpec("diagonal", 4, 4).with_length(8), "Unknown pattern kind"),
    ],
)
def test_bad_parameters_raise_explorer_error(build, match: str) -> None:
    with pytest.raises(ExplorerError, match=match):
        build()


# --- catalogued variants ---------------------------------------------------------------------------


def _cfg(key: str) -> dict:
    from explorer import catalog

    return catalog.variant_config(key)


def test_longformer_uses_its_per_layer_window_and_cls_global() -> None:
    cfg = _cfg("longformer")
    vp = P.pattern_for_variant("longformer", 2048, layer=3, global_positions=(7,))
    assert vp.spec.kind == "sliding-window"
    assert vp.spec.window == cfg["attention_window"][3]
    assert vp.spec.global_positions == (0, 7)  # [CLS] always, plus the user's pick
    assert vp.n_layers == len(cfg["attention_window"])
    assert vp.max_positions == cfg["max_position_embeddings"] - 2  # RoBERTa-style padding offset
    assert vp.stats.nnz == P.nnz_from_mask(vp.spec)


def test_bigbird_uses_its_config_and_falls_back_when_short() -> None:
    cfg = _cfg("bigbird")
    b, r = cfg["block_size"], cfg["num_random_blocks"]
    limit = (5 + 2 * r) * b
    short = P.pattern_for_variant("bigbird", limit)
    long_ = P.pattern_for_variant("bigbird", limit + 1, seed=3)
    assert short.stats.effective_kind == "full" and short.stats.density == 1.0
    assert long_.stats.effective_kind == "block-sparse" and long_.spec.block_size == b
    assert long_.spec.num_random_blocks == r and long_.spec.seed == 3
    assert long_.stats.nnz == P.nnz_from_mask(long_.spec)


def test_gpt_neo_and_gpt3_alternate_global_and_local_layers() -> None:
    for key in ("gpt-neo", "gpt3"):
        cfg = _cfg(key)
        kinds = P.alternating_layers(cfg)
        vps = [P.pattern_for_variant(key, 1024, layer) for layer in range(4)]
        for layer, vp in enumerate(vps):
            expected = "local-causal" if kinds[layer] == "local" else "causal"
            assert vp.spec.kind == expected, (key, layer)
        local = next(vp for vp in vps if vp.spec.kind == "local-causal")
        assert local.spec.window == cfg["window_size"]
        assert vps[0].n_layers == len(kinds)
    assert {"global", "local"} <= set(P.alternating_layers(_cfg("gpt-neo")))


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
    variants = P.supported_variants()
    assert {"bert-base", "gpt2", "longformer", "bigbird", "gpt-neo", "t5-base"} <= set(variants)
    for key in variants:
        vp = P.pattern_for_variant(key, 256, allow_beyond_max=True)
        assert vp.stats.nnz == P.nnz_from_mask(vp.spec), key


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", ()), ("   ", ()), ("5, 17 3", (3, 5, 17)), ("9;9,9", (9,))],
)
def test_parse_positions_accepts(text: str, expected: tuple[int, ...]) -> None:
    assert P.parse_positions(text, 100) == expected


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("x" * 50_000, "50,000 characters"),
        ("5, 🙂", "not a token position"),
        ("مرحبا", "not a token position"),
        ("<script>alert(1)</script>", "not a token position"),
        ("١٢", "not a token position"),  # Arabic-Indic digits: isdigit() but not a position we accept
        ("-3", "not a token position"),
        ("150", "past the end"),
        (" ".join(str(i) for i in range(70)), "at most 64"),
    ],
)
def test_parse_positions_refuses(text: str, match: str) -> None:
    with pytest.raises(ExplorerError, match=match):
        P.parse_positions(text, 100)


def test_table_row_is_plain() -> None:
    row = P.table_row(P.pattern_for_variant("longformer", 1024))
    assert row["kind"] == "sliding-window" and row["non-zeros"] > 0 and "attention_window" in row["parameters"]


# --- CLI -------------------------------------------------------------------------------------------


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    from explorer.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_pattern_json(capsys) -> None:
    import json

    code, out, _ = _cli(capsys, "pattern", "bigbird", "--seq-len", "1024", "--json", "--verify", "--seed", "2")
    assert code == 0
    d = json.loads(out)
    expected = P.pattern_stats(P.block_sparse(1024, 64, 3, seed=2))
    assert d["kind"] == "block-sparse" and d["nnz"] == expected.nnz == d["nnz_from_mask"]
    assert d["density"] == expected.density and d["score_memory_bytes"] == 4 * expected.nnz


def test_cli_pattern_options_and_text_output(capsys) -> None:
    import json

    code, out, _ = _cli(capsys, "pattern", "longformer", "--seq-len", "2048", "--global", "5,17", "--json", "--curve")
    d = json.loads(out)
    assert code == 0 and d["spec"]["global_positions"] == [0, 5, 17]
    assert d["cost_curve"]["lengths"][0] == 512 and d["cost_curve"]["lengths"][-1] == 16_384
    code, out, _ = _cli(capsys, "pattern", "gpt-neo", "--seq-len", "1024", "--layer", "1", "--curve")
    assert code == 0 and "local-causal" in out and "score_memory_bytes" in out
    assert out.rstrip().splitlines()[-1].split()[0] == "16384"


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["pattern", "nope", "--seq-len", "10"], "Unknown variant"),
        (["pattern", "bert-base", "--seq-len", "0"], "positive"),
        (["pattern", "bert-base", "--seq-len", "-5"], "positive"),
        (["pattern", "t5-base", "--seq-len", "99999999999"], "between 1 and"),
        (["pattern", "bert-base", "--seq-len", "4096"], "at most 512 tokens"),
        (["pattern", "bert-base", "--seq-len", "ten"], "invalid int"),
        (["pattern", "longformer", "--seq-len", "64", "--global", "a,b"], "comma-separated"),
    ],
)
def test_cli_pattern_bad_arguments_one_line(capsys, argv: list[str], match: str) -> None:
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and not out
    assert match in err and len(err.strip().splitlines()) == 1, err
