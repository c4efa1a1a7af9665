"""explorer.objectives.text: tokenizing and framing text for a strategy, with the 512-token cut."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.objectives import text


def test_bert_frame_and_vocab() -> None:
    p = text.prepare("The cat sat.", "bert-base-uncased", "bert")
    assert p.tokens[0] == "[CLS]" and p.tokens[-1] == "[SEP]" and not p.truncated
    assert p.vocab.mask == "[MASK]" and len(p.vocab.replacements) > 1000


def test_pair_is_framed_with_two_separators() -> None:
    p = text.prepare("The cat sat.", "bert-base-uncased", "bert", pair="Le chat.")
    assert p.tokens.count("[SEP]") == 2


def test_long_text_is_cut_to_512_and_says_so() -> None:
    p = text.prepare("word " * 2000, "bert-base-uncased", "bert")
    assert len(p.tokens) == text.MAX_TOKENS and p.truncated and p.n_text_tokens == 2000


def test_longer_side_of_a_pair_is_cut_first() -> None:
    p = text.prepare("short text.", "bert-base-uncased", "bert", pair="long " * 1000)
    assert len(p.tokens) == text.MAX_TOKENS and "short" in p.tokens


@pytest.mark.parametrize("bad", ["", "   ", "\n\t"])
def test_empty_text_is_refused(bad: str) -> None:
    with pytest.raises(ExplorerError):
        text.prepare(bad, "bert-base-uncased", "bert")


def test_html_and_unicode_are_just_text() -> None:
    p = text.prepare("<b>naïve</b> 東京 🙂", "gpt2", "roberta")
    assert p.tokens[0] == "<s>" and p.tokens[-1] == "</s>" and len(p.tokens) > 4
