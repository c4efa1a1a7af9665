"""Facts about Hugging Face ``model_type`` values that several modules need (one home per rule).

>>> position_offset("roberta"), position_offset("bert"), position_offset("bigbird_pegasus")
(2, 0, 0)
>>> max_input_tokens({"model_type": "roberta", "max_position_embeddings": 514})
512
>>> bigbird_falls_back(704, block_size=64, num_random_blocks=3), bigbird_falls_back(705, 64, 3)
(True, False)
>>> t5 = {"model_type": "t5", "num_layers": 6, "num_heads": 8, "is_encoder_decoder": True}
>>> num_layers(t5), num_layers(t5, "decoder"), num_heads(t5), is_encoder_decoder(t5)
(6, 6, 8, True)
>>> num_layers({"model_type": "gpt2", "n_layer": 12}), is_encoder_decoder({"model_type": "gpt2"})
(12, False)
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "DECODER_LAYER_FIELDS", "HEAD_FIELDS", "LAYER_FIELDS", "POSITION_OFFSET_TYPES", "RELATIVE_POSITION_TYPES",
    "ROBERTA_STYLE_TOKENIZER_TYPES", "bigbird_falls_back", "config_int", "is_encoder_decoder", "max_input_tokens",
    "head_width", "num_heads", "num_layers", "position_offset",
]

# RoBERTa-style position embeddings start at ``padding_idx + 1`` (= 2): two rows of
# ``max_position_embeddings`` are never used for tokens (514 rows -> 512 tokens). BART and
# BigBird-Pegasus also offset their learned positions, but add the offset to the table size
# themselves, so their ``max_position_embeddings`` is the real limit.
POSITION_OFFSET_TYPES: frozenset[str] = frozenset({"roberta", "longformer", "xlm-roberta", "camembert"})

# Relative position schemes: the config's max/n_positions is not enforced by the model.
RELATIVE_POSITION_TYPES: frozenset[str] = frozenset({"t5", "mt5", "umt5", "deberta", "deberta-v2"})

# Byte-level BPE models that add RoBERTa's special tokens (<s>, </s>, <pad>, <mask>) to GPT-2's files.
ROBERTA_STYLE_TOKENIZER_TYPES: tuple[str, ...] = (
    "roberta", "bart", "longformer", "deberta", "camembert", "xlm-roberta", "mbart")

# The same count under each family's name, in the order they are tried. A config object answers the
# first name through its attribute_map (T5's num_layers is also num_hidden_layers); a raw config.json
# dict has only its own spelling, so every spelling is listed.
LAYER_FIELDS: tuple[str, ...] = ("num_hidden_layers", "encoder_layers", "num_layers", "n_layer", "n_layers")
# A decoder stack: T5's num_decoder_layers (it defaults to num_layers), BART's decoder_layers, else the
# only stack's count (BERT2BERT's decoder is a copy of its encoder config).
DECODER_LAYER_FIELDS: tuple[str, ...] = ("num_decoder_layers", "decoder_layers", *LAYER_FIELDS)
HEAD_FIELDS: tuple[str, ...] = ("num_attention_heads", "encoder_attention_heads", "num_heads", "n_head", "n_heads")
# A head's width where the config states it (Gemma's head_dim, T5's d_kv, DeBERTa-v2's attention_head_size):
# it need not be hidden / heads (Gemma 3 270M: 4 heads x 256 against a 640-wide residual stream).
HEAD_WIDTH_FIELDS: tuple[str, ...] = ("head_dim", "d_kv", "attention_head_size")
HIDDEN_FIELDS: tuple[str, ...] = ("hidden_size", "d_model", "n_embd", "dim", "emb_dim")


def position_offset(model_type: str, pad_token_id: int | None = 1) -> int:
    """Rows of the position table a RoBERTa-style model never uses for tokens (``pad_token_id + 1``)."""
    if str(model_type) not in POSITION_OFFSET_TYPES:
        return 0
    return int(pad_token_id if pad_token_id is not None else 1) + 1


def _get(cfg: object, name: str) -> object:
    return cfg.get(name) if isinstance(cfg, Mapping) else getattr(cfg, name, None)


def config_int(cfg: object, *names: str) -> int | None:
    """The first of ``names`` that holds a whole number (not a bool) in a config dict or object."""
    for name in names:
        value = _get(cfg, name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def is_encoder_decoder(cfg: object) -> bool:
    """Whether a config (dict or object) has an encoder and a decoder: T5/BART say so with
    ``is_encoder_decoder``; a composite ``EncoderDecoderConfig`` (BERT2BERT) by its model_type, which
    a catalog dict carries before the composite config is built."""
    return _get(cfg, "model_type") == "encoder-decoder" or bool(_get(cfg, "is_encoder_decoder"))


def _stack(cfg: object, part: str) -> object:
    """The config that holds one stack's fields: a composite EncoderDecoderConfig keeps them in its
    ``encoder`` / ``decoder`` sub-configs; every other config (and a flat catalog dict) is its own."""
    if _get(cfg, "model_type") != "encoder-decoder":
        return cfg
    sub = _get(cfg, "decoder" if part in ("decoder", "cross") else "encoder")
    return sub if isinstance(sub, Mapping) or hasattr(sub, "model_type") else cfg


def num_layers(cfg: object, part: str = "encoder") -> int | None:
    """Layers of the encoder (or the only stack) or, with ``part`` "decoder"/"cross", of the decoder;
    None when the config names no count."""
    if part in ("decoder", "cross"):
        return config_int(_stack(cfg, part), *DECODER_LAYER_FIELDS)
    return config_int(_stack(cfg, part), *LAYER_FIELDS)


def num_heads(cfg: object) -> int | None:
    """Attention heads per layer of the encoder (or the only stack); None when the config names none."""
    return config_int(_stack(cfg, "encoder"), *HEAD_FIELDS)


def head_width(cfg: object) -> int | None:
    """Width of one attention head of the encoder (or the only stack): the stated width, else MobileBERT's
    bottleneck (``true_hidden_size``) or the hidden size, divided by the heads; None when neither is known.

    >>> head_width({"hidden_size": 640, "num_attention_heads": 4, "head_dim": 256})
    256
    >>> head_width({"hidden_size": 512, "num_attention_heads": 4, "use_bottleneck": True, "true_hidden_size": 128})
    32
    >>> head_width({"d_model": 1024, "num_heads": 128, "d_kv": 128}), head_width({"n_embd": 768, "n_head": 12})
    (128, 64)
    """
    stack = _stack(cfg, "encoder")
    stated = config_int(stack, *HEAD_WIDTH_FIELDS)
    if stated and stated > 0:
        return stated
    heads = num_heads(cfg)
    bottleneck = config_int(stack, "true_hidden_size") if _get(stack, "use_bottleneck") else None
    hidden = bottleneck or config_int(stack, *HIDDEN_FIELDS)
    return hidden // heads if hidden and heads else None


def max_input_tokens(cfg: object) -> int | None:
    """Longest input (special tokens included) a config's absolute positions allow; None when unbounded.

    ``cfg`` is a config dict or a ``PretrainedConfig``.
    """
    model_type = str(_get(cfg, "model_type") or "")
    if model_type in RELATIVE_POSITION_TYPES:
        return None
    for name in ("max_position_embeddings", "n_positions", "n_ctx"):
        limit = _get(cfg, name)
        if isinstance(limit, int) and limit > 0:
            pad = _get(cfg, "pad_token_id")
            return limit - position_offset(model_type, pad if isinstance(pad, int) else 1)
    return None


def bigbird_falls_back(seq_len: int, block_size: int, num_random_blocks: int) -> bool:
    """BigBird's (and BigBird-Pegasus's) rule: ``seq_len <= (5 + 2 r) * block_size`` runs full attention.

    Both ``BigBirdModel.forward`` and ``BigBirdPegasusEncoder.forward`` switch to ``original_full``
    for such inputs, because the block-sparse layout needs 3 window + 2 global + r random blocks.
    """
    return int(seq_len) <= (5 + 2 * int(num_random_blocks)) * int(block_size)
