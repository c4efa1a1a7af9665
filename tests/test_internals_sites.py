"""Hook points per architecture, checked against each family's own forward on tiny random models of every
catalog family: the readout of the last block is the model's output, every site exists with the widths its
config states, and the stream is what the blocks add up to."""

from __future__ import annotations

import pytest
import torch
import transformers as tf

from explorer.architecture import build
from explorer.core.errors import ExplorerError
from explorer.internals import hooked, sites
from tests.tiny_families import FAMILY_KEYS, bert2bert, inputs, tiny_family


def _width(layer: torch.nn.Module) -> int:
    w = layer.weight
    return int(w.shape[1] if isinstance(layer, torch.nn.Linear) else w.shape[0])  # Linear (out, in); Conv1D (in, out)


@pytest.fixture(scope="module", params=[*FAMILY_KEYS, "bert2bert"])
def family(request) -> tuple[str, torch.nn.Module]:
    key = request.param
    return key, bert2bert() if key == "bert2bert" else tiny_family(key)


def test_the_last_block_read_through_the_head_is_the_models_output(family) -> None:
    key, model = family
    s = sites.of(model)
    with torch.no_grad():
        entered, outs, output = hooked.streams(model, s, inputs(model))
        assert len(outs) == s.layers == 2
        assert entered.shape == outs[0].shape and entered.shape[-1] == s.d_model
        torch.testing.assert_close(s.readout(model, outs[-1]), output.logits, atol=1e-5, rtol=0)


def test_every_site_exists_with_the_widths_the_config_states(family) -> None:
    key, model = family
    s = sites.of(model)
    for i in range(s.layers):
        for path in (s.block(i), s.attn(i), s.mlp(i)):
            sites.module(model, path)
        assert _width(sites.module(model, s.heads_in(i))) == s.heads * s.head_width, key
        if s.d_ff is not None:
            assert _width(sites.module(model, s.neurons_in(i))) == s.d_ff, key
    assert s.heads >= 1 and s.head_width >= 1


def test_a_pre_norm_block_adds_its_attention_and_mlp_outputs_to_the_stream() -> None:
    """GPT-2: block out = block in + attention sublayer + MLP sublayer, exactly the sites' outputs."""
    model = tiny_family("gpt2")
    s = sites.of(model)
    seen: dict[str, torch.Tensor] = {}
    hooks = [sites.module(model, p).register_forward_hook(
        lambda _m, _a, out, p=p: seen.__setitem__(p, sites.first(out))) for p in (s.attn(0), s.mlp(0))]
    with torch.no_grad():
        entered, outs, _ = hooked.streams(model, s, inputs(model))
    for h in hooks:
        h.remove()
    torch.testing.assert_close(outs[0], entered + seen[s.attn(0)] + seen[s.mlp(0)], atol=1e-6, rtol=0)


def test_shared_layers_are_one_module_called_once_per_layer() -> None:
    albert = tiny_family("albert-base")
    s = sites.of(albert)
    assert s.shared and s.block(0) == s.block(1)
    with torch.no_grad():
        _, outs, _ = hooked.streams(albert, s, inputs(albert))
    assert len(outs) == 2 and not torch.equal(outs[0], outs[1])
    shared = build.share_all_layers(tiny_family("gpt2"))  # the Architecture page's "share layers" knob
    s = sites.of(shared)
    with torch.no_grad():
        _, outs, output = hooked.streams(shared, s, inputs(shared))
    assert s.shared and len(outs) == 2
    torch.testing.assert_close(s.readout(shared, outs[-1]), output.logits, atol=1e-5, rtol=0)


def test_a_model_without_a_head_says_so() -> None:
    model = tf.BertModel(tf.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                       intermediate_size=64))
    s = sites.of(model)
    assert not s.has_head and s.layers == 2 and s.block(1) == "encoder.layer.1"
    with pytest.raises(ExplorerError, match="no language-model head"):
        s.readout(model, torch.zeros(1, 2, 32))


def test_a_discriminator_has_no_vocabulary_head() -> None:
    cfg = tf.ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=2, intermediate_size=64)
    assert not sites.of(tf.ElectraForPreTraining(cfg)).has_head


def test_out_of_range_layers_and_unknown_models_are_refused_in_words() -> None:
    s = sites.of(tiny_family("gpt2"))
    with pytest.raises(ExplorerError, match="layers 0 to 1"):
        s.block(2)
    with pytest.raises(ExplorerError, match="layers 0 to 1"):
        s.heads_in(-1)
    with pytest.raises(ExplorerError, match="not a transformers model"):
        sites.of(torch.nn.Linear(2, 2))


def test_the_sites_are_the_cards_and_a_model_unlike_its_card_is_refused() -> None:
    t5 = tiny_family("t5-small")
    encoder = sites.stack_of(t5, "encoder")  # the encoder's hook points, the decoder's readout
    assert encoder.block(1) == "encoder.block.1" and encoder.mlp(0) == "encoder.block.0.layer.1.DenseReluDense"
    assert encoder.final_norm == sites.of(t5).final_norm == "decoder.final_layer_norm"
    gpt2 = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=50, n_embd=16, n_layer=2, n_head=2))
    assert sites.of(gpt2).d_ff == 4 * 16  # GPT-2 leaves n_inner unset: four times the width
    cut = tiny_family("gpt2")
    cut.transformer.h = cut.transformer.h[:1]
    with pytest.raises(ExplorerError, match="do not match its anatomy card"):
        sites.of(cut)
    llama = tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=16, hidden_size=8, intermediate_size=16,
                                               num_hidden_layers=1, num_attention_heads=2))
    with pytest.raises(ExplorerError, match="no anatomy card for model type 'llama'"):
        sites.of(llama)
