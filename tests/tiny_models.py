"""Tiny random models with REAL tokenizers, saved with ``save_pretrained`` (test fixtures).

Every function builds a 2-layer, 32-wide model (well under a second), saves model +
tokenizer into ``directory`` and returns it, so tests go through the real loading code
(``explorer.runtime.loading.load_model(str(directory), task)``) with no network. Other engineers'
tests import these: keep the names and signatures stable.

    save_tiny("bert", tmp_path / "bert")           # BertForMaskedLM + bert-base-uncased WordPiece
    save_tiny("distilbert-qa", tmp_path / "qa")    # DistilBertForQuestionAnswering
    save_tiny("minilm", tmp_path / "minilm")       # all-MiniLM-L6-v2's shape and files, 48 wide
    KINDS                                           # every kind save_tiny accepts
"""

from __future__ import annotations

import json
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

    if kind == "minilm":  # all-MiniLM-L6-v2's shape (6 layers x 12 heads, 512 positions, its WordPiece), 48 wide
        tok = _bert_tok()
        return tf.BertModel(tf.BertConfig(vocab_size=len(tok), hidden_size=48, num_hidden_layers=6,
                                          num_attention_heads=12, intermediate_size=96)), tok
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
         "electra-discriminator", "albert", "t5", "bart", "minilm")


def _sentence_transformers_files(directory: Path, width: int) -> None:
    """The files beside all-MiniLM-L6-v2's weights that say how to pool it (mean, then normalised)."""
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
    pooling = {"word_embedding_dimension": width, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
               "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}
    (directory / "1_Pooling").mkdir(exist_ok=True)
    (directory / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    (directory / "sentence_bert_config.json").write_text('{"max_seq_length": 256, "do_lower_case": false}',
                                                         encoding="utf-8")
    (directory / "1_Pooling" / "config.json").write_text(json.dumps(pooling), encoding="utf-8")


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
    if kind == "minilm":
        _sentence_transformers_files(directory, model.config.hidden_size)
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
