"""Shared tokenizers under threads: Streamlit sessions call the same cached tokenizer from several threads with
their own truncation settings (QA, similarity, attention, fill-mask). The Rust backend keeps those settings on the
shared object, and two threads changing them at once, unlocked, raise "Already borrowed"."""

from __future__ import annotations

import threading

from explorer.core import locks as tokenizers
from explorer.tokenization import load_tokenizer

TEXT = " ".join(["The quick brown fox jumps over the lazy dog."] * 40)


def _qa(tok, i: int) -> None:  # explorer.tasks.qa's call: a pair, truncating the second, with a stride
    tok("what jumps?", TEXT, truncation="only_second", max_length=64 + i % 5, stride=16,
        return_overflowing_tokens=True, padding="max_length")


def _similarity(tok, i: int) -> None:  # explorer.tasks.similarity's: single texts, truncated, padded
    tok([TEXT] * 8, truncation=True, max_length=128 + i % 3, padding=True)


def _plain(tok, i: int) -> None:  # fill-mask's and the decoders': no truncation
    tok([TEXT] * 8, add_special_tokens=False, truncation=False)


def _hammer(tok, call, calls: int, errors: list[BaseException]) -> None:
    try:
        for i in range(calls):
            call(tok, i)
    except BaseException as err:  # noqa: BLE001 (any failure of a thread is the finding)
        errors.append(err)


def test_a_shared_tokenizer_survives_threads_changing_its_truncation() -> None:
    """Without the lock: "Truncation error: Second sequence not provided" in 4 of 6 threads (measured)."""
    tok = load_tokenizer("bert-base-uncased")
    errors: list[BaseException] = []
    threads = [threading.Thread(target=_hammer, args=(tok, call, 150, errors))
               for call in (_qa, _similarity, _plain) * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, f"{len(errors)} thread(s) failed: {errors[0]!r}"
    assert tokenizers.is_locked(tok)


def test_a_locked_tokenizer_gives_the_same_ids_and_is_still_a_tokenizer() -> None:
    from transformers import PreTrainedTokenizerBase

    tok = load_tokenizer("gpt2")
    assert isinstance(tok, PreTrainedTokenizerBase) and tokenizers.is_locked(tok)
    assert tok("Hello world")["input_ids"] == [15496, 995]
    assert tok.decode([15496, 995]) == "Hello world"
