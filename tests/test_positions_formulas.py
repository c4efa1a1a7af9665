"""The position formulas against transformers' own code: T5's buckets, DeBERTa's log buckets, M2M-100's sinusoids,
rotary rotations of Gemma 3 (both bases) and GPT-J (partial, every-two layout), ALiBi's slopes (BLOOM's)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers
from transformers.models.bloom.modeling_bloom import build_alibi_tensor
from transformers.models.deberta_v2.modeling_deberta_v2 import make_log_bucket_position
from transformers.models.gemma3 import modeling_gemma3
from transformers.models.gptj import modeling_gptj
from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding
from transformers.models.t5.modeling_t5 import T5Attention

from explorer.architecture.positions import formulas as f
from tests.tiny_gemma import tiny_gemma_config

DISTANCES = np.arange(-1024, 1025)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("buckets", "max_distance"), [(32, 128), (16, 64), (64, 256)])
def test_t5_buckets_equal_transformers_for_every_distance(bidirectional, buckets, max_distance) -> None:
    own = T5Attention._relative_position_bucket(torch.as_tensor(DISTANCES), bidirectional=bidirectional,
                                                num_buckets=buckets, max_distance=max_distance)
    assert f.t5_bucket(DISTANCES, bidirectional, buckets, max_distance).tolist() == own.tolist()


@pytest.mark.parametrize(("bucket_size", "max_position"), [(256, 512), (32, 128)])
def test_deberta_buckets_equal_transformers(bucket_size, max_position) -> None:
    own = make_log_bucket_position(torch.as_tensor(DISTANCES), bucket_size, max_position)
    clamped = torch.clamp(own, -bucket_size, bucket_size - 1)  # as disentangled attention indexes its table
    assert f.deberta_bucket(DISTANCES, bucket_size, max_position).tolist() == clamped.tolist()


def test_sinusoid_table_equals_m2m100s_module() -> None:
    module = M2M100SinusoidalPositionalEmbedding(130, 24, padding_idx=1)
    own = module.weights.numpy()
    formula = f.sinusoid_table(own.shape[0], 24, "tensor2tensor", padding_idx=1)
    assert own.shape == (132, 24) and np.abs(own - formula).max() < 1e-5  # offset 2: rows for padding_idx + 1


def test_sinusoid_dot_depends_only_on_the_distance() -> None:
    table = f.sinusoid_table(300, 32)
    for d in (0, 1, 7, 40):
        dots = (table[:200] * table[d:200 + d]).sum(axis=1)
        assert np.allclose(dots, f.sinusoid_dot(np.array([d]), 32)[0], atol=1e-9)


@pytest.mark.parametrize(("dims", "layout", "rotary"), [(16, "half", None), (16, "pairs", None), (32, "pairs", 8)])
def test_rotary_scores_depend_only_on_the_distance(dims, layout, rotary) -> None:
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(1, dims)), rng.normal(size=(1, dims))
    for m, n in ((3, 10), (0, 57), (100, 2)):
        scores = []
        for shift in (0, 1, 33, 500):
            qm = f.rope_rotate(q, np.array([m + shift]), 10_000.0, layout, rotary)
            kn = f.rope_rotate(k, np.array([n + shift]), 10_000.0, layout, rotary)
            scores.append(float((qm * kn).sum()))
        assert max(scores) - min(scores) < 1e-5


def test_rope_score_is_one_at_zero_and_equals_rotated_ones() -> None:
    ones = np.ones((1, 16))
    for d in (0, 3, 50):
        rotated = (f.rope_rotate(ones, np.array([d]), 10_000.0) * ones).sum() / 16
        assert abs(float(rotated) - float(f.rope_score(np.array([d]), 16, 10_000.0)[0])) < 1e-9


def test_rotation_equals_gemma3s_own_rotary_embedding_for_both_bases() -> None:
    cfg = tiny_gemma_config(64, 0)
    torch.manual_seed(0)
    model = transformers.Gemma3ForCausalLM(cfg).eval()
    positions = np.arange(0, 300, 7)
    x = torch.randn(1, 2, len(positions), cfg.head_dim)
    for layer_type, base in (("sliding_attention", 10_000.0), ("full_attention", 1_000_000.0)):
        cos, sin = model.model.rotary_emb(x, torch.as_tensor(positions)[None, :], layer_type)
        own, _ = modeling_gemma3.apply_rotary_pos_emb(x, x, cos, sin)
        formula = f.rope_rotate(x.numpy(), positions, base, "half")
        assert np.abs(own.numpy() - formula).max() < 1e-4, layer_type


def test_rotation_equals_gptjs_own_partial_rotary() -> None:
    cfg = transformers.GPTJConfig(vocab_size=64, n_embd=64, n_layer=1, n_head=2, rotary_dim=8, n_positions=512)
    torch.manual_seed(0)
    attn = transformers.GPTJModel(cfg).eval().h[0].attn
    positions = np.arange(0, 400, 11)
    x = torch.randn(1, len(positions), 2, 32)  # (B, T, heads, head width): GPT-J rotates before the transpose
    sin, cos = torch.split(attn.embed_positions[torch.as_tensor(positions)][None], 4, dim=-1)
    rotated = modeling_gptj.apply_rotary_pos_emb(x[..., :8], sin, cos)
    own = torch.cat([rotated, x[..., 8:]], dim=-1).transpose(1, 2)  # (B, heads, T, width)
    formula = f.rope_rotate(x.transpose(1, 2).numpy(), positions, 10_000.0, "pairs", rotary_dims=8)
    assert np.abs(own.numpy() - formula).max() < 1e-4
    assert np.array_equal(formula[..., 8:], x.transpose(1, 2).numpy()[..., 8:])  # the rest pass unchanged


@pytest.mark.parametrize("heads", [4, 6, 8, 12])
def test_alibi_slopes_equal_blooms(heads) -> None:
    alibi = build_alibi_tensor(torch.ones(1, 3), heads, torch.float32)  # (heads, 1, T): slope * position
    slopes = alibi[:, 0, 1].numpy()
    assert np.allclose(f.alibi_slopes(heads), slopes, rtol=1e-6)
    assert f.alibi_bias(np.array([-2, 0, 3]), 0.5).tolist() == [-1.0, 0.0, -1.5]
