"""A loaded model's own position weights, read through its anatomy card, against the modules themselves."""

from __future__ import annotations

import numpy as np
import torch
import transformers

from explorer.architecture.positions import formulas as f
from explorer.internals import positions as read
from explorer.internals.located import locate
from tests.tiny_gemma import tiny_gemma_config


def _seeded(build, config):
    torch.manual_seed(0)
    return build(config).eval()


def test_learned_tables_equal_the_module_weights() -> None:
    gpt2 = _seeded(transformers.GPT2LMHeadModel, transformers.GPT2Config(vocab_size=50, n_embd=16, n_layer=1,
                                                                          n_head=2, n_positions=40))
    found = locate(gpt2)
    assert np.array_equal(read.table(found), gpt2.transformer.wpe.weight.detach().numpy())
    assert read.table_offset(found) == 0
    bert = _seeded(transformers.BertModel, transformers.BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                                                                    num_attention_heads=2, intermediate_size=32,
                                                                    max_position_embeddings=24))
    assert np.array_equal(read.table(locate(bert)), bert.embeddings.position_embeddings.weight.detach().numpy())


def test_m2m100s_table_is_its_sinusoid_buffer_and_the_formula() -> None:
    cfg = transformers.M2M100Config(vocab_size=50, d_model=16, encoder_layers=1, decoder_layers=1,
                                    encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                                    decoder_ffn_dim=32, max_position_embeddings=30, pad_token_id=1)
    found = locate(_seeded(transformers.M2M100ForConditionalGeneration, cfg))
    own, offset = read.table(found, "encoder"), read.table_offset(found, "encoder")
    assert offset == 2 and np.abs(own - f.sinusoid_table(own.shape[0], 16, "tensor2tensor", 1)).max() < 1e-5


def test_t5s_bias_table_gives_the_modules_computed_position_bias() -> None:
    cfg = transformers.T5Config(vocab_size=50, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1,
                                num_heads=2, relative_attention_num_buckets=32, relative_attention_max_distance=128)
    model = _seeded(transformers.T5ForConditionalGeneration, cfg)
    with torch.no_grad():
        for module in (model.encoder, model.decoder):
            module.block[0].layer[0].SelfAttention.relative_attention_bias.weight.normal_()
    found = locate(model)
    for stack, attention, both in (("encoder", model.encoder, True), ("decoder", model.decoder, False)):
        weights = read.bias_table(found, stack)  # (buckets, heads)
        n = 300  # past max_distance: the log buckets and the last one
        with torch.no_grad():
            own = attention.block[0].layer[0].SelfAttention.compute_bias(n, n)[0].numpy()  # (heads, T, T)
        rel = np.arange(n)[None, :] - np.arange(n)[:, None]
        ours = weights[f.t5_bucket(rel, both, 32, 128)].transpose(2, 0, 1)
        assert np.array_equal(ours, own), stack


def test_gemma3s_rotary_module_equals_the_formula_for_both_bases() -> None:
    found = locate(_seeded(transformers.Gemma3ForCausalLM, tiny_gemma_config(64, 0)))
    checks = dict(read.rotary_check(found, np.arange(0, 2000, 13), "half", 16))
    assert set(checks) == {"local", "global"} and max(checks.values()) < 1e-4
    cos_local, _ = read.rotary_cos_sin(found, np.arange(5), "local")
    cos_global, _ = read.rotary_cos_sin(found, np.arange(5), "global")
    assert cos_local.shape == (5, 16) and not np.allclose(cos_local, cos_global)  # two bases, two rotations


def test_gptjs_partial_rotary_buffer_equals_the_formula() -> None:
    cfg = transformers.GPTJConfig(vocab_size=64, n_embd=64, n_layer=1, n_head=2, rotary_dim=8, n_positions=512)
    found = locate(_seeded(transformers.GPTJForCausalLM, cfg))
    checks = dict(read.rotary_check(found, np.arange(0, 500, 7), "pairs", 8))
    assert set(checks) == {"all"} and checks["all"] < 1e-4
