"""explorer.architecture.modeltypes: the one reading of layer and head counts and of "is this an
encoder-decoder?", on config dicts (catalog, config.json) and on transformers config objects alike."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from transformers import BartConfig, BertConfig, EncoderDecoderConfig, GPT2Config, T5Config

from explorer.architecture import modeltypes as mt


def _bert2bert() -> EncoderDecoderConfig:
    enc = BertConfig(num_hidden_layers=4, num_attention_heads=2, hidden_size=64)
    dec = BertConfig(num_hidden_layers=3, num_attention_heads=2, hidden_size=64, is_decoder=True,
                     add_cross_attention=True)
    return EncoderDecoderConfig.from_encoder_decoder_configs(enc, dec)


@pytest.mark.parametrize("cfg, layers, decoder, heads, enc_dec", [
    (BertConfig(num_hidden_layers=5, num_attention_heads=4), 5, 5, 4, False),
    (GPT2Config(n_layer=7, n_head=3), 7, 7, 3, False),
    (T5Config(num_layers=6, num_decoder_layers=2, num_heads=8), 6, 2, 8, True),
    (BartConfig(encoder_layers=3, decoder_layers=4, encoder_attention_heads=2), 3, 4, 2, True),
    (_bert2bert(), 4, 3, 2, True),  # composite: each stack's own sub-config
    ({"model_type": "gpt2", "n_layer": 24, "n_head": 16}, 24, 24, 16, False),
    ({"model_type": "t5", "num_layers": 6, "num_heads": 8, "is_encoder_decoder": True}, 6, 6, 8, True),
    ({"model_type": "bart", "encoder_layers": 12, "decoder_layers": 6, "encoder_attention_heads": 16,
      "is_encoder_decoder": True}, 12, 6, 16, True),
    ({"model_type": "encoder-decoder", "num_hidden_layers": 12, "num_attention_heads": 12}, 12, 12, 12, True),
    ({"model_type": "xlnet", "n_layers": 2, "n_heads": 4}, 2, 2, 4, False),
])
def test_counts_and_encoder_decoder_on_every_spelling(cfg, layers, decoder, heads, enc_dec) -> None:
    assert mt.num_layers(cfg) == layers
    assert mt.num_layers(cfg, "decoder") == mt.num_layers(cfg, "cross") == decoder
    assert mt.num_heads(cfg) == heads
    assert mt.is_encoder_decoder(cfg) is enc_dec


@pytest.mark.parametrize("cfg", [
    {}, None, SimpleNamespace(), {"num_hidden_layers": True, "num_attention_heads": "12"},
    {"model_type": "encoder-decoder", "encoder": 5, "decoder": 3},  # malformed composite: no sub-config
])
def test_missing_or_malformed_counts_are_none(cfg) -> None:
    assert mt.num_layers(cfg) is None and mt.num_heads(cfg) is None
    assert mt.is_encoder_decoder(cfg) is (isinstance(cfg, dict) and cfg.get("model_type") == "encoder-decoder")


def test_each_spelling_is_listed_once() -> None:
    for fields in (mt.LAYER_FIELDS, mt.DECODER_LAYER_FIELDS, mt.HEAD_FIELDS):
        assert len(set(fields)) == len(fields)
    assert mt.DECODER_LAYER_FIELDS[2:] == mt.LAYER_FIELDS  # a decoder without its own count: the only stack's
    assert mt.config_int({"a": None, "b": 3.0, "c": 2}, "a", "b", "c") == 2  # whole numbers only
