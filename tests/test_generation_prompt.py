"""Prompts: empty refused, huge ones cut to their last tokens with a notice, leading specials kept."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.core.limits import GENERATION_PROMPT_CHARS
from explorer.tasks.generation.prompt import context_limit, encode_prompt
from explorer.tokenization import load_tokenizer


class _BosTokenizer:
    """A stand-in that adds a leading <bos> (id 2) like Gemma's tokenizer."""

    all_special_ids = [2]

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict:
        return {"input_ids": [2] + [10 + (ord(c) % 50) for c in text]}


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_prompt_is_refused(text: str) -> None:
    with pytest.raises(ExplorerError, match="empty"):
        encode_prompt(load_tokenizer("gpt2"), text, 64)


def test_fifty_thousand_characters_are_cut_to_the_window_with_a_notice() -> None:
    tok = load_tokenizer("gpt2")
    text = "word " * 10_000  # 50,000 characters
    prompt = encode_prompt(tok, text, 128)
    full = tok(text)["input_ids"]
    assert len(prompt.ids) == 128 and prompt.total_tokens == len(full)
    assert list(prompt.ids) == full[-128:]  # the end is what a decoder continues
    assert [n.kind for n in prompt.notices] == ["truncated"]
    assert f"{len(full):,}" in prompt.notices[0].text


def test_leading_special_token_survives_the_cut() -> None:
    prompt = encode_prompt(_BosTokenizer(), "abcdefghij", 5)
    assert prompt.ids[0] == 2 and len(prompt.ids) == 5
    assert prompt.ids[1:] == tuple(10 + (ord(c) % 50) for c in "ghij")


def test_short_prompt_is_untouched() -> None:
    prompt = encode_prompt(load_tokenizer("gpt2"), "Hello <b>world</b> ✓", 64)
    assert prompt.notices == () and prompt.total_tokens == len(prompt.ids)


def test_absurdly_long_text_is_refused_not_tokenized() -> None:
    with pytest.raises(ExplorerError, match="characters"):
        encode_prompt(load_tokenizer("gpt2"), "x" * (GENERATION_PROMPT_CHARS + 1), 64)


def test_context_limit_is_the_smaller_of_model_and_cap() -> None:
    class _Cfg:
        max_position_embeddings = 32768

    class _Model:
        config = _Cfg()

    assert context_limit(_Model(), cap=1024) == 1024
    _Cfg.max_position_embeddings = 100
    assert context_limit(_Model(), cap=1024) == 100


def test_a_bert_style_tokenizers_closing_sep_is_dropped_for_a_decoder() -> None:
    from explorer.tasks.generation.prompt import decoder_ids
    from explorer.training import vocab

    tok = vocab.tokenizer()  # the pretraining lab's: "[CLS] x [SEP]"; a GPT it trained continues "[CLS] x"
    assert decoder_ids(tok, "the list is") == tok("the list is")["input_ids"][:-1]
    assert encode_prompt(tok, "the list is", 64).ids == tuple(tok("the list is")["input_ids"][:-1])
    gpt2 = load_tokenizer("gpt2")  # appends nothing: unchanged
    assert decoder_ids(gpt2, "the list is") == gpt2("the list is")["input_ids"]


def test_special_tokens_typed_as_text_are_named() -> None:
    tok = load_tokenizer("gpt2")
    prompt = encode_prompt(tok, "Hello<|endoftext|>" * 3, 64)
    assert [n.kind for n in prompt.notices] == ["info"]
    assert "3 special token(s)" in prompt.notices[0].text and "<|endoftext|> ×3" in prompt.notices[0].text
    cut = encode_prompt(tok, "<|endoftext|>" * 500, 128)  # cut and named: both notices
    assert [n.kind for n in cut.notices] == ["truncated", "info"] and "×500" in cut.notices[1].text
    assert encode_prompt(_BosTokenizer(), "abc", 64).notices == ()  # the tokenizer's own <bos> is not "typed"


@pytest.mark.parametrize("typed", [1, 500])
def test_special_tokens_typed_after_the_tokenizers_own_are_all_counted_and_kept(bundled_decoder, typed: int) -> None:
    """500 typed <bos> after Gemma's own are all counted and kept, not reported as 499 with the last one
    dropped: a text of special tokens alone matches the tokenizer's template at two places, and the first
    match is the wrong one."""
    from transformers import AutoTokenizer

    from explorer.tasks.generation.prompt import decoder_ids, encode_prompt

    tok = AutoTokenizer.from_pretrained(str(bundled_decoder))
    prompt = encode_prompt(tok, "<bos>" * typed, 4_000)
    assert len(prompt.ids) == typed + 1 == len(decoder_ids(tok, "<bos>" * typed))
    assert f"holds {typed:,} special token(s) typed as text (<bos> ×{typed:,})" in prompt.notices[0].text
