"""Windows of corpus tokens in, padded tensors out, with the same token budget for every objective.

The corpus is tokenized once into windows of at most ``seq_len - 2`` pieces (a document's
paragraphs run on; windows never cross documents), framed ``[CLS] ... [SEP]``. A batch is filled
with examples until their tokens reach ``batch_tokens``: an objective that shortens its input
(NSP and SOP keep two sentences) gets more examples per step, so every variant trains on the
same number of tokens per step.

>>> collate([{"input_ids": [2, 7, 3], "labels": [-100, 7, -100]},
...          {"input_ids": [2, 3], "labels": [-100, -100]}])["input_ids"]
tensor([[2, 7, 3],
        [2, 3, 0]])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from explorer.training import vocab
from explorer.training.corpus import Corpus

__all__ = ["PAD_ID", "Window", "collate", "document_windows", "fill", "per_document", "split", "stream", "windows"]

PAD_ID = 0
Window = tuple[str, ...]
_PAD_VALUE = {"labels": -100, "decoder_labels": -100}  # every other key pads with 0


def document_windows(doc: Sequence[str], seq_len: int) -> list[Window]:
    """One document's paragraphs (run on) as framed windows of at most ``seq_len`` tokens."""
    tok = vocab.tokenizer()
    return _frame(tok.convert_ids_to_tokens(_ids(tok, doc)), seq_len)


def _ids(tok: Any, doc: Sequence[str]) -> list[int]:
    return [p for ids in tok(list(doc), add_special_tokens=False)["input_ids"] for p in ids]


def _frame(tokens: Sequence[str], seq_len: int) -> list[Window]:
    body = seq_len - 2
    # a last scrap of a few pieces teaches nothing and skews lengths
    return [("[CLS]", *tokens[i:i + body], "[SEP]") for i in range(0, len(tokens), body)
            if len(tokens[i:i + body]) >= 8]


@lru_cache(maxsize=4)
def _document_ids(corpus: Corpus, split: str) -> tuple[np.ndarray, ...]:
    """Each document of ``split`` tokenized once, whatever window length is asked for later (the bundled corpus's
    950k words take seconds; its ids as int32 take 5 MB)."""
    tok = vocab.tokenizer()
    docs = corpus.train if split == "train" else corpus.heldout
    return tuple(np.asarray(_ids(tok, doc), dtype=np.int32) for doc in docs)


@lru_cache(maxsize=1)
def _pieces() -> tuple[str, ...]:
    """The lab vocabulary's pieces by id (windows share these strings instead of a copy per occurrence)."""
    tok = vocab.tokenizer()
    return tuple(tok.convert_ids_to_tokens(list(range(len(tok)))))


@lru_cache(maxsize=4)
def per_document(corpus: Corpus, split: str, seq_len: int) -> tuple[tuple[Window, ...], ...]:
    """Each document of the corpus's ``split`` ("train" | "heldout") as its framed windows, in corpus order.

    The pretraining windows and the early-exit task's labelled ones (:mod:`explorer.training.sections`) read this,
    and every window length is cut from the one tokenization."""
    pieces = _pieces()
    return tuple(tuple(_frame([pieces[i] for i in ids.tolist()], seq_len)) for ids in _document_ids(corpus, split))


@lru_cache(maxsize=4)
def windows(corpus: Corpus, split: str, seq_len: int) -> tuple[Window, ...]:
    """The corpus's ``split`` ("train" | "heldout") as framed token windows, in corpus order."""
    return tuple(w for doc in per_document(corpus, split, seq_len) for w in doc)


def collate(examples: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
    """Pad every list-valued key to the longest example; scalars become a 1-D tensor.

    ``attention_mask`` is added from ``input_ids`` (1 on real tokens).
    """
    out: dict[str, torch.Tensor] = {}
    for key in examples[0]:
        values = [ex[key] for ex in examples]
        if not isinstance(values[0], list):
            out[key] = torch.tensor(values)
            continue
        width = max(len(v) for v in values)
        pad = _PAD_VALUE.get(key, PAD_ID)
        out[key] = torch.tensor([v + [pad] * (width - len(v)) for v in values], dtype=torch.long)
        if key == "input_ids":
            out["attention_mask"] = torch.tensor([[1] * len(v) + [0] * (width - len(v)) for v in values])
    return out


def stream(n_windows: int, seed: int, start: int = 0) -> Iterator[tuple[int, int]]:
    """(epoch, window index) pairs in a seeded order, reshuffled every epoch, from position ``start`` on."""
    position = start
    while True:
        epoch, offset = divmod(position, n_windows)
        order = np.random.default_rng([seed, epoch]).permutation(n_windows)
        for i in order[offset:]:
            yield epoch, int(i)
            position += 1


def fill(source: Iterator[tuple[int, int]], make: Callable[[int, int], dict[str, Any]], batch_tokens: int,
         max_examples: int = 4096) -> list[dict[str, Any]]:
    """Examples from ``source`` until their input tokens reach ``batch_tokens`` (or ``max_examples`` are taken)."""
    batch: list[dict[str, Any]] = []
    tokens = 0
    while tokens < batch_tokens and len(batch) < max_examples:
        epoch, index = next(source)
        ex = make(epoch, index)
        batch.append(ex)
        tokens += len(ex["input_ids"])
    return batch


def split(examples: Sequence[dict[str, Any]], max_padded: int) -> list[list[dict[str, Any]]]:
    """``examples`` in order, cut into micro-batches whose padded size (count x longest input) is at most
    ``max_padded`` tokens: what one forward pass holds (:mod:`explorer.training.stepmemory`). A single example
    longer than that still gets a batch of its own.

    >>> [len(b) for b in split([{"input_ids": [1] * n} for n in (4, 4, 8, 2)], 8)]
    [2, 1, 1]
    """
    out: list[list[dict[str, Any]]] = []
    part: list[dict[str, Any]] = []
    longest = 0
    for ex in examples:
        n = len(ex["input_ids"])
        if part and (len(part) + 1) * max(longest, n) > max_padded:
            out.append(part)
            part, longest = [], 0
        part.append(ex)
        longest = max(longest, n)
    if part:
        out.append(part)
    return out
