"""explorer.runtime.tokenizers: a checkpoint's own tokenizer, else its variant's shipped one; RoBERTa's
special tokens over GPT-2's files; a [MASK] added to a private copy only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.architecture import catalog
from explorer.core.errors import ExplorerError
from explorer.runtime import tokenizers
from explorer.tokenization import load_tokenizer


def test_roberta_tokenizer_puts_fairseq_specials_first_and_the_mask_last() -> None:
    tok = tokenizers.roberta_tokenizer()
    assert [tok.bos_token_id, tok.pad_token_id, tok.eos_token_id, tok.unk_token_id] == [0, 1, 2, 3]
    assert tok.mask_token_id == len(tok) - 1
    assert tok.tokenize("the <mask> of")[1:] == [" <mask>", "Ġof"]  # the mask takes its space: no stray "Ġ"


def test_shipped_tokenizer_serves_roberta_types_from_gpt2_files() -> None:
    assert tokenizers.shipped_tokenizer("gpt2", "roberta") is tokenizers.roberta_tokenizer()
    assert tokenizers.shipped_tokenizer("gpt2", "gpt2") is load_tokenizer("gpt2")


def test_mask_is_added_to_a_copy_never_to_the_shared_tokenizer() -> None:
    patched = tokenizers.tokenizer_with_mask("t5", "deberta-v2")
    assert patched.mask_token == "[MASK]" and load_tokenizer("t5").mask_token is None
    assert tokenizers.tokenizer_with_mask("bert-base-uncased") is load_tokenizer("bert-base-uncased")


def test_checkpoint_tokenizer_is_the_directorys_own(tmp_path: Path) -> None:
    load_tokenizer("bert-base-uncased").save_pretrained(tmp_path)
    assert len(tokenizers.checkpoint_tokenizer(tmp_path, None)) == len(load_tokenizer("bert-base-uncased"))


def test_a_directory_without_tokenizer_files_falls_back_to_the_variant_or_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (tmp_path / "tokenizer.json").write_text("{not json")  # unreadable: same as none
    variant = catalog.get_variant("bert-base")
    assert tokenizers.checkpoint_tokenizer(tmp_path, variant) is tokenizers.shipped_tokenizer(
        variant.tokenizer, variant.model_type)
    with pytest.raises(ExplorerError, match="no tokenizer files"):
        tokenizers.checkpoint_tokenizer(tmp_path, None)
