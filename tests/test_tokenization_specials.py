"""explorer.tokenization.specials: special tokens per tokenizer and per model family."""

from __future__ import annotations

import json

import pytest

from explorer.core.errors import ExplorerError
from explorer.tokenization.registry import TOKENIZERS
from explorer.tokenization.specials import FAMILIES, family_tokens, mask_token, special_tokens
from explorer.tokenization.split import tokenize

NAMES = list(TOKENIZERS)


def test_special_tokens_each_tokenizer_adds() -> None:
    assert special_tokens("bert-base-uncased").template == ("[CLS]", "$A", "[SEP]")
    assert special_tokens("bigbird").template == ("[CLS]", "$A", "[SEP]")
    assert special_tokens("t5").template == ("$A", "</s>")
    assert special_tokens("gpt2").template == ("$A",)
    t5 = special_tokens("t5")
    assert len(t5.sentinels) == 100
    assert (t5.ids["<extra_id_0>"], t5.ids["<extra_id_99>"]) == (32099, 32000)
    assert special_tokens("bert-base-cased").ids["[MASK]"] == 103
    assert json.loads(json.dumps(t5.to_dict()))["template"] == ["$A", "</s>"]


def test_mask_tokens() -> None:
    assert [mask_token(n) for n in NAMES] == ["[MASK]", "[MASK]", None, "<extra_id_0>", "[MASK]"]


def test_family_tokens_use_each_familys_own_specials() -> None:
    assert family_tokens("BERT / DistilBERT / ELECTRA", "Hi there", "Bye") == (
        "[CLS]", "hi", "there", "[SEP]", "bye", "[SEP]")
    roberta = family_tokens("RoBERTa / BART / Longformer", "Hi there", "Bye")
    assert roberta[:1] + roberta[-1:] == ("<s>", "</s>") and roberta.count("</s>") == 3
    assert family_tokens("GPT-2", "Hi there") == tuple(tokenize("gpt2", "Hi there").tokens)
    assert family_tokens("T5", "Hi there")[-1] == "</s>"
    assert set(FAMILIES.values()) <= set(TOKENIZERS)


def test_unknown_family_lists_the_valid_ones() -> None:
    with pytest.raises(ExplorerError, match="family 'XLNet'.*BERT / DistilBERT / ELECTRA"):
        family_tokens("XLNet", "hi")
