"""Every catalog family as a tiny random model with its language-model head (test fixture).

Each catalog variant's own config, shrunk to 2 layers, 64 wide, 2 heads and a 320-token vocabulary, built with the
head the live pages load for its family (masked LM, causal LM, seq2seq): the real module tree of every family in
well under a second each, for tests of code that walks a model's insides (hook points, lens, interventions).

    model = tiny_family("gpt2")          # GPT2LMHeadModel, 2 layers
    FAMILY_KEYS                          # one catalog key per (model_type, family)
    inputs(model)                        # a short input for model(**inputs) (decoder ids for a seq2seq model)
"""

from __future__ import annotations

import torch

VOCAB = 320
TINY = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 96,
        "vocab_size": VOCAB}
# Fields a tiny width must follow where the config states them (a head of 64 would not fit 2 heads of 64 wide).
FOLLOW = {"embedding_size": 32, "attention_head_size": 32, "rotary_dim": 16}
# One key per (model_type, family) the catalog holds, in catalog order; BERT2BERT is built by bert2bert().
FAMILY_KEYS = ("bert-base", "roberta-base", "deberta-base", "deberta-v2-xlarge", "albert-base", "distilbert",
               "mobilebert", "electra-small-generator", "xlm", "xlm-roberta", "longformer", "bigbird", "gpt",
               "gpt2", "gpt3", "gpt-j", "ctrl", "gemma3-270m", "t5-small", "bart-base", "m2m100", "bigbird-pegasus")
SEED = 0


def tiny_config(key: str):
    """The catalog variant's config, shrunk (its own model_type, norms, positions and head kept)."""
    from explorer.architecture import build

    config = build.make_config(key)
    overrides = {k: v for k, v in TINY.items() if any(hasattr(config, a) for a in build.KNOBS[k])}
    config = build.apply_overrides(config, overrides)
    for field, value in FOLLOW.items():
        if getattr(config, field, None) is not None:
            setattr(config, field, value)
    if config.model_type == "longformer":
        config.attention_window = [8] * 2  # one window per layer
    return config


def _auto(family: str):
    import transformers as tf

    return {"encoder": tf.AutoModelForMaskedLM, "decoder": tf.AutoModelForCausalLM,
            "encoder-decoder": tf.AutoModelForSeq2SeqLM}[family]


def tiny_family(key: str) -> torch.nn.Module:
    """A tiny random ``key`` with the head its family loads with (eval mode, float32, CPU, seeded)."""
    from explorer.architecture import catalog
    from explorer.architecture.build import BUILD_LOCK

    family = catalog.get_variant(key).family
    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return _auto(family).from_config(tiny_config(key)).eval()


def bert2bert() -> torch.nn.Module:
    """BERT2BERT: a tiny BERT encoder and a BERT decoder with cross-attention and an LM head."""
    import transformers as tf

    from explorer.architecture.build import BUILD_LOCK

    small = {k: v for k, v in TINY.items()}
    enc = tf.BertConfig(**small)
    dec = tf.BertConfig(**small, is_decoder=True, add_cross_attention=True)
    config = tf.EncoderDecoderConfig.from_encoder_decoder_configs(enc, dec, decoder_start_token_id=1,
                                                                  pad_token_id=0)
    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return tf.EncoderDecoderModel(config=config).eval()


def inputs(model: torch.nn.Module, length: int = 7, seed: int = 1) -> dict[str, torch.Tensor]:
    """Random ids for ``model(**inputs)``: ``length`` tokens (and 5 decoder tokens for an encoder-decoder)."""
    g = torch.Generator().manual_seed(seed)
    out = {"input_ids": torch.randint(5, VOCAB - 20, (1, length), generator=g)}
    if getattr(model.config, "is_encoder_decoder", False):
        out["decoder_input_ids"] = torch.randint(5, VOCAB - 20, (1, 5), generator=g)
    return out
