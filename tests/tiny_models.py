"""Tiny random models with REAL tokenizers, saved with ``save_pretrained`` (test fixtures).

Every function builds a 2-layer, 32-wide model (well under a second), saves model +
tokenizer into ``directory`` and returns it, so tests go through the real loading code
(``explorer.runtime.loading.load_model(str(directory), task)``) with no network. Other engineers'
tests import these: keep the names and signatures stable.

    save_tiny("bert", tmp_path / "bert")           # BertForMaskedLM + bert-base-uncased WordPiece
    save_tiny("distilbert-qa", tmp_path / "qa")    # DistilBertForQuestionAnswering
    KINDS                                           # every kind save_tiny accepts
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

SMALL: dict[str, Any] = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                         "intermediate_size": 64, "max_position_embeddings": 128}


def _bert_tok():
    from explorer.tokenization import load_tokenizer

    return load_tokenizer("bert-base-uncased")


def _roberta_tok():
    from explorer.runtime.tokenizers import roberta_tokenizer

    return roberta_tokenizer()


def _t5_tok():
    from explorer.tokenization import load_tokenizer

    return load_tokenizer("t5")


def _specials(tok) -> dict[str, int]:
    return {"pad_token_id": tok.pad_token_id, "bos_token_id": tok.bos_token_id or tok.cls_token_id,
            "eos_token_id": tok.eos_token_id or tok.sep_token_id}


def _build(kind: str):
    """(model, tokenizer) for one kind; the config sizes are tiny."""
    import transformers as tf

    if kind in ("bert", "bert-base"):
        tok = _bert_tok()
        cls = tf.BertForMaskedLM if kind == "bert" else tf.BertModel
        return cls(tf.BertConfig(vocab_size=len(tok), **SMALL)), tok
    if kind == "roberta":
        tok = _roberta_tok()
        cfg = tf.RobertaConfig(vocab_size=len(tok), **{**SMALL, "max_position_embeddings": 130}, **_specials(tok))
        return tf.RobertaForMaskedLM(cfg), tok
    if kind in ("distilbert", "distilbert-qa"):
        tok = _bert_tok()
        cfg = tf.DistilBertConfig(vocab_size=len(tok), dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                                  max_position_embeddings=128)
        cls = tf.DistilBertForMaskedLM if kind == "distilbert" else tf.DistilBertForQuestionAnswering
        return cls(cfg), tok
    if kind in ("electra-generator", "electra-discriminator"):
        tok = _bert_tok()
        cfg = tf.ElectraConfig(vocab_size=len(tok), embedding_size=16, **SMALL)
        cls = tf.ElectraForMaskedLM if kind == "electra-generator" else tf.ElectraForPreTraining
        return cls(cfg), tok
    if kind == "albert":
        tok = _bert_tok()
        return tf.AlbertForMaskedLM(tf.AlbertConfig(vocab_size=len(tok), embedding_size=16, **SMALL)), tok
    if kind == "t5":
        tok = _t5_tok()
        cfg = tf.T5Config(vocab_size=len(tok), d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2,
                          pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                          decoder_start_token_id=tok.pad_token_id)
        return tf.T5ForConditionalGeneration(cfg), tok
    if kind == "bart":
        tok = _roberta_tok()
        cfg = tf.BartConfig(vocab_size=len(tok), d_model=32, encoder_layers=2, decoder_layers=2,
                            encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                            decoder_ffn_dim=64, max_position_embeddings=128,
                            decoder_start_token_id=tok.eos_token_id, forced_eos_token_id=tok.eos_token_id,
                            **_specials(tok))
        return tf.BartForConditionalGeneration(cfg), tok
    raise ValueError(f"unknown tiny model kind {kind!r}; use one of {KINDS}")


KINDS = ("bert", "bert-base", "roberta", "distilbert", "distilbert-qa", "electra-generator",
         "electra-discriminator", "albert", "t5", "bart")


def save_tiny(kind: str, directory: str | Path, seed: int = 0, bin_only: bool = False) -> Path:
    """Build a tiny random ``kind`` model and save model + tokenizer into ``directory``.

    ``bin_only=True`` saves pickled pytorch_model.bin instead of safetensors (safety tests).
    """
    directory = Path(directory)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model, tok = _build(kind)
    model.eval().save_pretrained(directory)
    tok.save_pretrained(directory)
    if bin_only:  # transformers 5 always writes safetensors: swap in the legacy pickle by hand
        torch.save(model.state_dict(), directory / "pytorch_model.bin")
        (directory / "model.safetensors").unlink()
    return directory


def fake_variant(key: str, model_type: str = "bert", hub_id: str | None = None,
                 tokenizer: str = "bert-base-uncased", name: str | None = None):
    """A stand-in catalog record with the fields the loading code reads."""
    from types import SimpleNamespace

    return SimpleNamespace(key=key, name=name or key, model_type=model_type, reference_checkpoint=hub_id,
                           tokenizer=tokenizer, head="mlm")


def patch_catalog(monkeypatch, *variants) -> None:
    """Make ``explorer.architecture.catalog`` serve exactly these variants (tests independent of assets)."""
    from explorer.architecture import catalog
    from explorer.core.errors import ExplorerError

    table = {v.key: v for v in variants}

    def get_variant(key: str):
        if key not in table:
            raise ExplorerError(f"Unknown variant {key!r}.")
        return table[key]

    monkeypatch.setattr(catalog, "load_catalog", lambda: dict(table))
    monkeypatch.setattr(catalog, "get_variant", get_variant)
    monkeypatch.setattr(catalog, "keys", lambda: list(table))
