"""Text as a model reads it for the feature lab: fixed-length token windows from a corpus, and the forward's inputs.

Windows are cut from the documents of one part of a corpus (the training part, or the held-out part for metrics
and dashboards), in an order shuffled by the seed, each framed by the tokenizer's own special tokens (Gemma's
``<bos>``; BERT's ``[CLS]`` and ``[SEP]``; T5's closing ``</s>``), so every window is full and nothing is padded.
Positions holding a special token are marked: their activations are not features of the text.

A decoder and an encoder read a window as ``input_ids``; an encoder-decoder reads it in its encoder and, teacher
forced, in its decoder (its start token, then the window less its last token), so its decoder's loss is the
window's reconstruction. :func:`tokens_at` says which token sits at each position of the stack a tap is in.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer

__all__ = ["Windows", "cut", "frame", "inputs", "tokens_at"]


@dataclass(frozen=True)
class Windows:
    """``ids (N, T)`` int64 windows, ``special (N, T)`` bool where a special token sits."""

    ids: torch.Tensor
    special: torch.Tensor

    @property
    def count(self) -> int:
        return int(self.ids.shape[0])

    def part(self, start: int, stop: int) -> Windows:
        return Windows(self.ids[start:stop], self.special[start:stop])


def frame(tokenizer: Tokenizer) -> tuple[list[int], list[int]]:
    """(the ids a tokenizer puts before a text, those it puts after), e.g. ``([2], [])`` for Gemma's ``<bos>``."""
    plain = [int(i) for i in tokenizer("a b", add_special_tokens=False)["input_ids"]]
    framed = [int(i) for i in tokenizer("a b", add_special_tokens=True)["input_ids"]]
    for start in range(len(framed) - len(plain) + 1):
        if framed[start:start + len(plain)] == plain:
            return framed[:start], framed[start + len(plain):]
    return [], []


def _stream(tokenizer: Tokenizer, docs: tuple[tuple[str, ...], ...], wanted: int, seed: int) -> list[int]:
    """About ``wanted`` ids of the documents, taken in an order shuffled by ``seed``."""
    order = list(range(len(docs)))
    random.Random(seed).shuffle(order)
    ids: list[int] = []
    for i in order:
        ids += [int(t) for t in tokenizer("\n".join(docs[i]) + "\n", add_special_tokens=False)["input_ids"]]
        if len(ids) >= wanted:
            break
    return ids


def cut(tokenizer: Tokenizer, docs: tuple[tuple[str, ...], ...], count: int, seq_len: int, seed: int) -> Windows:
    """``count`` windows of ``seq_len`` tokens (specials included) from ``docs`` (see the module docstring)."""
    front, back = frame(tokenizer)
    body = seq_len - len(front) - len(back)
    if body < 4:
        raise ExplorerError(f"Windows of {seq_len} tokens leave no room for text beside this tokenizer's special "
                            "tokens: use longer windows.")
    ids = _stream(tokenizer, docs, count * body, seed)
    if len(ids) < count * body:
        have = len(ids) // body
        raise ExplorerError(f"The text gives {len(ids):,} tokens, {have:,} windows of {seq_len}; {count:,} are "
                            "needed here: give a longer text, or ask for fewer tokens.")
    rows = torch.tensor([front + ids[i * body:(i + 1) * body] + back for i in range(count)], dtype=torch.long)
    special_ids = sorted({int(t) for t in getattr(tokenizer, "all_special_ids", []) or []} | set(front) | set(back))
    special = torch.isin(rows, torch.tensor(special_ids, dtype=torch.long)) if special_ids else \
        torch.zeros_like(rows, dtype=torch.bool)
    return Windows(rows, special)


def _start(config: object) -> int:
    start = getattr(config, "decoder_start_token_id", None)
    if start is None:
        start = getattr(config, "pad_token_id", None)
    return int(start or 0)


def decoder_ids(config: object, ids: torch.Tensor) -> torch.Tensor:
    """``(B, T)`` the decoder's teacher-forced input: the start token, then ``ids`` less its last token."""
    return torch.cat([torch.full_like(ids[:, :1], _start(config)), ids[:, :-1]], dim=1)


def inputs(model: torch.nn.Module, family: str, ids: torch.Tensor) -> dict[str, object]:
    """``model(**inputs)`` for the windows ``ids (B, T)`` (already on the model's input device)."""
    out: dict[str, object] = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    if family == "encoder-decoder":
        out["decoder_input_ids"] = decoder_ids(model.config, ids)
    if family != "encoder":
        out["use_cache"] = False
    return out


def tokens_at(model: torch.nn.Module, family: str, stack: str | None, windows: Windows) -> Windows:
    """The windows as the tapped stack reads them: an encoder-decoder's decoder stack reads the shifted text."""
    if family == "encoder-decoder" and stack != "encoder":
        shifted = decoder_ids(model.config, windows.ids)
        return Windows(shifted, torch.cat([torch.ones_like(windows.special[:, :1]), windows.special[:, :-1]], 1))
    return windows
