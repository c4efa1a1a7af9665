"""The step-through's oracles for the decoder and encoder-decoder families beyond GPT-2, Gemma 3 and T5: every
recomputed step equals the model's own intermediate within 1e-5, the read logits equal its own forward, ``top``
equals the next-token answer (decoders) or the model's own prediction at the decoder's start token
(encoder-decoders), and a card planted with the wrong residual layout (GPT-J's parallel block read as sequential)
or norm placement (BART's post-LN read as pre-LN) walks to values the model never computed.

Tiny random models with their catalog tokenizers: GPT (post-LN, no final norm), GPT-Neo (a global and a local
layer, window 4, unscaled scores), GPT-J (parallel block, rotary on 8 of 16 dimensions), CTRL (scaled embeddings
plus sinusoids), BART (offset positions, embedding norm, a random final_logits_bias), M2M-100 (sinusoids past the
padding index, pre-LN, scaled embeddings), BigBird-Pegasus (block-sparse config falling back to full attention)
and BERT2BERT (two BERTs, the decoder's with cross-attention)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch
import transformers as tf

from explorer.architecture import anatomy
from explorer.architecture.build import BUILD_LOCK
from explorer.core.errors import ExplorerError
from explorer.internals.forward.steps import KINDS
from explorer.internals.forward.walk import Walk, walk
from explorer.runtime import tokenizers
from explorer.runtime.loading import LoadedModel
from explorer.tasks.generation.nexttoken import next_token

TOL = 1e-5
PROMPT = "The capital of France is a city of many"
DECODERS = ("gpt", "gpt-neo", "gpt-j", "ctrl")
SEQ2SEQ = ("bart", "m2m100", "bigbird-pegasus", "bert2bert")
# Verified at their own module: the steps a model has a module for
OWN_POINT = {"q", "k", "v", "concat", "out-proj", "residual", "mlp-up", "mlp-down", "final-norm"}
BERT: dict[str, Any] = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
        "initializer_range": 0.4}
BART: dict[str, Any] = {"d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 2,
        "decoder_attention_heads": 2, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "max_position_embeddings": 64,
        "init_std": 0.4, "pad_token_id": 1, "decoder_start_token_id": 2}
# full attention up to (5 + 2) x 8 = 56 tokens
PEGASUS_BLOCKS: dict[str, Any] = {"block_size": 8, "num_random_blocks": 1}


def _loaded(model: torch.nn.Module, tokenizer: object, key: str) -> LoadedModel:
    return LoadedModel(key, key, model.eval(), tokenizer, "cpu", "float32", None, None, True, 0.0)  # type: ignore[arg-type]


def _eager(cls, config) -> torch.nn.Module:
    """Eager attention, as the step-through loads a model."""
    return cls._from_config(config, attn_implementation="eager")


def _seeded(make):
    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return make()


def _bart(tok) -> torch.nn.Module:
    model = _eager(tf.BartForConditionalGeneration, tf.BartConfig(vocab_size=len(tok), **BART))
    with torch.no_grad():  # zeros at initialisation: random ones, so that leaving it out shows
        bias = model.get_buffer("final_logits_bias")
        bias.normal_(0.0, 1.0)
    return model


def _pegasus(tok) -> torch.nn.Module:
    config = tf.BigBirdPegasusConfig(vocab_size=len(tok), scale_embedding=True, use_bias=False,
                                     **{**BART, "pad_token_id": 0}, **PEGASUS_BLOCKS)
    return _eager(tf.BigBirdPegasusForConditionalGeneration, config)


def _bert2bert(tok) -> torch.nn.Module:
    encoder = tf.BertConfig(vocab_size=len(tok), **BERT)
    decoder = tf.BertConfig(vocab_size=len(tok), is_decoder=True, add_cross_attention=True, **BERT)
    config = tf.EncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder)
    config.decoder_start_token_id = tok.cls_token_id  # BERT2BERT starts its decoder at [CLS]
    return _eager(tf.EncoderDecoderModel, config)


@pytest.fixture(scope="module")
def families() -> dict[str, LoadedModel]:
    bert, gpt2 = tokenizers.shipped_tokenizer("bert-base-uncased"), tokenizers.shipped_tokenizer("gpt2")
    roberta, t5 = tokenizers.roberta_tokenizer(), tokenizers.shipped_tokenizer("t5")
    made = {
        "gpt": (lambda: _eager(tf.OpenAIGPTLMHeadModel, tf.OpenAIGPTConfig(
            vocab_size=len(bert), n_embd=32, n_layer=2, n_head=2, n_positions=64, initializer_range=0.4)), bert),
        "gpt-neo": (lambda: _eager(tf.GPTNeoForCausalLM, tf.GPTNeoConfig(
            vocab_size=len(gpt2), hidden_size=32, num_layers=2, num_heads=2, attention_types=[[["global", "local"], 1]],
            window_size=4, max_position_embeddings=64, intermediate_size=64, initializer_range=0.4)), gpt2),
        "gpt-j": (lambda: _eager(tf.GPTJForCausalLM, tf.GPTJConfig(
            vocab_size=len(gpt2), n_embd=32, n_layer=2, n_head=2, rotary_dim=8, n_positions=64,
            initializer_range=0.4)), gpt2),
        "ctrl": (lambda: _eager(tf.CTRLLMHeadModel, tf.CTRLConfig(
            vocab_size=len(gpt2), n_embd=32, dff=64, n_layer=2, n_head=2, n_positions=64, initializer_range=0.4)),
            gpt2),
        "bart": (lambda: _bart(roberta), roberta),
        "m2m100": (lambda: _eager(tf.M2M100ForConditionalGeneration, tf.M2M100Config(
            vocab_size=len(t5), scale_embedding=True, activation_function="relu", **BART)), t5),
        "bigbird-pegasus": (lambda: _pegasus(t5), t5),
        "bert2bert": (lambda: _bert2bert(bert), bert),
    }
    return {key: _loaded(_seeded(make), tok, key) for key, (make, tok) in made.items()}


def _worst(w: Walk) -> float:
    return max(s.max_abs_error or 0.0 for s in w.steps)


def _assert_oracle(w: Walk) -> None:
    assert w.steps and all(s.max_abs_error is not None for s in w.steps)
    worst = max(w.steps, key=lambda s: s.max_abs_error or 0.0)
    assert (worst.max_abs_error or 0.0) <= TOL, f"{worst.name} (layer {worst.layer}): {worst.max_abs_error}"
    assert all(s.exact for s in w.steps if s.kind in OWN_POINT), [s.name for s in w.steps if not s.exact]
    assert sum(s.exact for s in w.steps if s.kind == "logits") == 1
    assert {s.kind for s in w.steps} <= set(KINDS)
    assert w.logits_max_abs_error is not None and w.logits_max_abs_error <= TOL


@pytest.mark.parametrize("key", DECODERS + SEQ2SEQ)
def test_every_step_equals_the_models_own_intermediate(families, key: str) -> None:
    w = walk(families[key], PROMPT)
    _assert_oracle(w)
    stacks = {s.stack for s in w.steps}
    assert stacks == ({"encoder", "decoder"} if key in SEQ2SEQ else {"decoder"})


def _layer(w: Walk, layer: int, stack: str = "decoder") -> list[str]:
    return [s.kind for s in w.steps if s.layer == layer and s.stack == stack]


def _step(w: Walk, name: str, layer: int | None = 0, stack: str = "decoder"):
    return next(s for s in w.steps if s.name.startswith(name) and s.layer == layer and s.stack == stack)


def test_the_decoders_steps_follow_their_cards(families) -> None:
    gpt = walk(families["gpt"], PROMPT)
    kinds = _layer(gpt, 0)
    assert kinds[kinds.index("out-proj"):][:3] == ["out-proj", "residual", "norm"]  # post-LN
    assert "final-norm" not in {s.kind for s in gpt.steps} and "MLP: gelu_new" in {s.name for s in gpt.steps}
    neo = walk(families["gpt-neo"], PROMPT)
    assert "scale" not in {s.kind for s in neo.steps}  # unscaled scores
    local, glob = _step(neo, "attention: mask", 1), _step(neo, "attention: mask", 0)
    assert local.tensor is not None and local.tensor[6, 2] == 0 and local.tensor[6, 3] == 1  # window of 4
    assert glob.tensor is not None and glob.tensor[6, 0] == 1 and glob.tensor[2, 3] == 0  # causal, whole context
    assert "local layer" in local.note and "global layer" in glob.note
    gptj = walk(families["gpt-j"], PROMPT)
    kinds = _layer(gptj, 0)
    assert kinds.count("norm") == 1 and kinds.count("residual") == 1 and kinds[-1] == "residual"  # parallel block
    q, turned = _step(gptj, "attention: queries Q"), _step(gptj, "attention: queries rotated")
    assert q.tensor is not None and turned.tensor is not None and "first 8 of 16" in turned.note
    assert torch.equal(q.tensor[..., 8:], turned.tensor[..., 8:]) and not torch.equal(q.tensor[..., :8],
                                                                                     turned.tensor[..., :8])
    ctrl = walk(families["ctrl"], PROMPT)
    embed = [s.name for s in ctrl.steps if s.layer is None][:4]
    assert embed[1].startswith("token embedding × √d_model") and embed[2].startswith("position encoding (sinusoidal")


def test_the_encoder_decoders_steps_follow_their_cards(families) -> None:
    bart = walk(families["bart"], PROMPT)
    assert "rows 2 to" in _step(bart, "position embedding", None, "encoder").note  # BART's offset
    assert _step(bart, "embedding norm", None, "encoder").exact
    keys = _step(bart, "cross-attention: keys K")
    assert keys.shape[1] == len(bart.tokens) and len(bart.decoder_tokens) == 1
    assert bart.steps[-2].name == "logits + final_logits_bias"
    m2m = walk(families["m2m100"], PROMPT)
    assert "positions 2 to" in _step(m2m, "position encoding", None, "encoder").note  # past padding_idx 1
    kinds = _layer(m2m, 0, "encoder")
    assert kinds[0] == "norm" and [s.kind for s in m2m.steps if s.layer is None].count("final-norm") == 2  # pre-LN
    pegasus = walk(families["bigbird-pegasus"], PROMPT)
    assert "falls back to full attention" in _step(pegasus, "attention: mask", 1, "encoder").note
    assert _step(pegasus, "attention: mask", 1).note == ""  # the decoder's is causal full attention
    finals = [s.checked_against for s in pegasus.steps if s.kind == "final-norm"]
    assert finals == ["model.encoder.layernorm_embedding", "model.decoder.layernorm_embedding"]
    b2b = walk(families["bert2bert"], PROMPT)
    kinds = _layer(b2b, 1)
    assert kinds.count("norm") == 3 and _step(b2b, "cross-attention: keys K", 1).shape[1] == len(b2b.tokens)
    assert b2b.decoder_tokens == ("[CLS]",)


@pytest.mark.parametrize("key", [k for k in DECODERS if k != "gpt"])
def test_top_is_the_next_token_answer(families, key: str) -> None:
    w, reference = walk(families[key], PROMPT), next_token(families[key], PROMPT, top_k=5)
    assert [t for t, _ in w.top] == [c.token for c in reference.candidates]
    assert [p for _, p in w.top] == pytest.approx([c.probability for c in reference.candidates], abs=TOL)


def test_gpts_top_is_its_own_last_position_prediction(families) -> None:
    """GPT-1 keeps no key/value cache, which next_token's forward reads: its own forward is the reference."""
    lm = families["gpt"]
    w = walk(lm, PROMPT)
    ids = [int(i) for i in lm.tokenizer(PROMPT)["input_ids"]][:-1]  # [CLS] and the text, no closing [SEP]
    with torch.no_grad():
        probs, best = lm.model(input_ids=torch.tensor([ids])).logits[0, -1].softmax(-1).topk(5)
    assert w.tokens[-1] != "[SEP]" and [t for t, _ in w.top] == [lm.tokenizer.decode([int(i)]) for i in best]
    assert [p for _, p in w.top] == pytest.approx(probs.tolist(), abs=TOL)


@pytest.mark.parametrize("key", SEQ2SEQ)
def test_top_is_the_encoder_decoders_first_answer_token(families, key: str) -> None:
    lm = families[key]
    w = walk(lm, PROMPT)
    ids, start = lm.tokenizer(PROMPT)["input_ids"], lm.model.config.decoder_start_token_id
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([[start]])).logits[0, 0]
    probs, best = logits.softmax(-1).topk(5)
    assert [t for t, _ in w.top] == [lm.tokenizer.decode([int(i)]) for i in best]
    assert [p for _, p in w.top] == pytest.approx(probs.tolist(), abs=TOL)


def test_a_card_planted_with_a_sequential_block_or_pre_ln_fails_the_oracle(families) -> None:
    gptj = anatomy.card_of("gptj")
    assert _worst(walk(families["gpt-j"], PROMPT)) <= TOL
    assert _worst(walk(families["gpt-j"], PROMPT, card=dataclasses.replace(gptj, residual="sequential"))) > 1e-2
    bart = anatomy.card_of("bart")
    pre_ln = dataclasses.replace(bart, norms=dataclasses.replace(bart.norms, placement="pre"))
    assert _worst(walk(families["bart"], PROMPT, card=pre_ln)) > 1e-2


def test_bigbird_pegasus_that_ran_block_sparse_is_refused_in_words() -> None:
    """Past (5 + 2r) blocks the encoder runs block-sparse (a fresh model: transformers switches a model to full
    attention for good once it sees a short input)."""
    t5 = tokenizers.shipped_tokenizer("t5")
    lm = _loaded(_seeded(lambda: _pegasus(t5)), t5, "bigbird-pegasus")
    with pytest.raises(ExplorerError, match="ran block-sparse attention on 6[0-9] tokens.*at most 56 tokens"):
        walk(lm, "word " * 60)
