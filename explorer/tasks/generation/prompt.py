"""A typed prompt -> the token ids a decoder reads, cut to the usable window with a notice.

A decoder predicts from the *end* of its input, so an over-long prompt keeps its last tokens
(and the special tokens the tokenizer itself puts in front, such as Gemma's one ``<bos>``). Special
tokens the user typed (``<pad>`` x 2,000) are text like any other: counted and cut with the rest,
so no prompt ever feeds more than ``limit`` tokens. They are also *read as special tokens*, not as the
characters typed, and a notice says so (``<pad>`` x 500 would otherwise look like an ordinary prompt).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.limits import GENERATION_PROMPT_CHARS
from explorer.core.notices import Notice
from explorer.core.userinput import require_text
from explorer.runtime import capacity
from explorer.runtime.capacity import Limit
from explorer.tasks.generation.strategy import MAX_PROMPT_TOKENS

if TYPE_CHECKING:  # typing only: the models bring transformers
    from transformers import PreTrainedModel

__all__ = ["Prompt", "context_limit", "decoder_ids", "encode_prompt", "prompt_limit"]



@dataclass(frozen=True)
class Prompt:
    """The ids fed to the model and what the user should know about them."""

    text: str
    ids: tuple[int, ...]  # (T,) leading special tokens included
    total_tokens: int  # before cutting
    notices: tuple[Notice, ...]


def _context(model: PreTrainedModel) -> int | None:
    limit = getattr(model.config, "max_position_embeddings", None) or getattr(model.config, "n_positions", None)
    return int(limit) if limit else None


def context_limit(model: PreTrainedModel, cap: int | None = None) -> int:
    """Tokens a prompt may have: the model's position limit, at most ``cap`` (``None``: the device's cap,
    :func:`prompt_limit`)."""
    if cap is None:
        return prompt_limit(model).value
    context = _context(model)
    return min(context, cap) if context else cap


def prompt_limit(model: PreTrainedModel) -> Limit:
    """Tokens a prompt may have on the model's device, and why: its whole context where that is the
    bound, else :func:`explorer.runtime.capacity.prompt_tokens` (1,024 on a CPU; on a GPU the context as
    far as the KV caches of every beam fit in free memory)."""
    context = _context(model)
    if not hasattr(model, "parameters"):
        value = min(context, MAX_PROMPT_TOKENS) if context else MAX_PROMPT_TOKENS
        return Limit(value, f"at most {MAX_PROMPT_TOKENS:,} prompt tokens")
    dtype = next((p.dtype for p in model.parameters()), None)
    kv = capacity.kv_bytes_per_token(model.config, getattr(dtype, "itemsize", 4))
    cap = capacity.prompt_tokens(capacity.model_facts(model), context, kv)
    if context and context <= cap.value:
        return Limit(context, f"the model's context is {context:,} tokens")
    return cap


def decoder_ids(tokenizer: Tokenizer, text: str) -> list[int]:
    """Ids of ``text`` as a decoder continues it: the tokenizer's own specials in front, none after the text.

    A BERT-style tokenizer frames a text ``[CLS] x [SEP]`` (the pretraining lab's, saved with a GPT it
    trained: :mod:`explorer.training.causal`); a decoder fed that closing ``[SEP]`` would continue after
    an end of text, so what the tokenizer appends is dropped. GPT-2 and Gemma append nothing.
    """
    ids = list(tokenizer(text, add_special_tokens=True)["input_ids"])
    plain = list(tokenizer(text, add_special_tokens=False)["input_ids"])
    if not plain or len(ids) <= len(plain):
        return ids
    # Where the text's own ids start, read off a plain word: a text of special tokens alone is ambiguous (500
    # typed <bos> after Gemma's own <bos> match at 0 and at 1, and the first match cut the last one).
    front = _front_count(tokenizer)
    if front is not None and ids[front:front + len(plain)] == plain:
        return ids[:front + len(plain)]
    for front in range(len(ids) - len(plain) + 1):
        if ids[front:front + len(plain)] == plain:
            return ids[:front + len(plain)]
    return ids


def _front_count(tokenizer: Tokenizer) -> int | None:
    """How many ids the tokenizer puts before a text's own (Gemma 1, BERT 1, GPT-2 0), from the word "a"."""
    ids = list(tokenizer("a", add_special_tokens=True)["input_ids"])
    plain = list(tokenizer("a", add_special_tokens=False)["input_ids"])
    fronts = [f for f in range(len(ids) - len(plain) + 1) if ids[f:f + len(plain)] == plain] if plain else []
    return fronts[0] if len(fronts) == 1 else None


def _added_in_front(tokenizer: Tokenizer, ids: list[int]) -> int:
    """How many of ``ids``' first tokens the tokenizer added itself (Gemma: its one ``<bos>``; GPT-2: none).

    Read off an empty text, which gets exactly the tokens the tokenizer adds; only those are kept
    through a cut, never a run of special tokens the user typed.
    """
    added = list(tokenizer("", add_special_tokens=True)["input_ids"])
    count = 0
    while count < min(len(added), len(ids)) and ids[count] == added[count]:
        count += 1
    return count


def _cut_notice(tokenizer: Tokenizer, total: int, kept_front: list[int], tail: int, limit: int, why: str) -> Notice:
    front = ""
    if kept_front:
        names = getattr(tokenizer, "convert_ids_to_tokens", None)
        shown = " ".join(str(t) for t in names(kept_front)) if names else f"{len(kept_front)} special token(s)"
        front = f" The tokenizer's own {shown} stays in front."
    return Notice("truncated", f"The prompt has {total:,} tokens (special tokens included); only its last "
                               f"{tail:,} are used (the model reads at most {limit:,} here"
                               f"{': ' + why if why else ''}), so the beginning was cut.{front}")


def _typed_specials(tokenizer: Tokenizer, ids: list[int]) -> tuple[Notice, ...]:
    """A notice when the text itself holds special tokens (the tokenizer's own ones in front excepted)."""
    special = set(getattr(tokenizer, "all_special_ids", None) or ())
    counts = Counter(i for i in ids[_added_in_front(tokenizer, ids):] if i in special)
    if not counts:
        return ()
    names = getattr(tokenizer, "convert_ids_to_tokens", None)
    shown = [f"{names([i])[0] if names else f'id {i}'} ×{n:,}" for i, n in counts.most_common(5)]
    more = f" and {len(counts) - 5} more" if len(counts) > 5 else ""
    return (Notice("info", f"The prompt holds {sum(counts.values()):,} special token(s) typed as text "
                           f"({', '.join(shown)}{more}): the model reads them as its own special tokens, "
                           "not as the characters typed."),)


def encode_prompt(tokenizer: Tokenizer, text: str, limit: int, why: str = "") -> Prompt:
    """Token ids of ``text`` (special tokens added as the model was trained), at most ``limit`` of them;
    ``why``: the reason of that limit, quoted by the notice when the prompt is cut."""
    text = require_text(text, what="prompt", empty_hint="type a few words for the model to continue.",
                        max_chars=GENERATION_PROMPT_CHARS,
                        limit_note="longer prompts are cut to the last tokens anyway")
    ids = decoder_ids(tokenizer, text)
    if not ids:
        raise ExplorerError("The prompt gave no tokens: type some words.")
    limit = max(1, int(limit))
    typed = _typed_specials(tokenizer, ids)
    if len(ids) <= limit:
        return Prompt(text, tuple(ids), len(ids), typed)
    head = min(_added_in_front(tokenizer, ids), limit - 1)  # at least one token of the text itself
    tail = limit - head
    kept = ids[:head] + ids[len(ids) - tail:]  # (limit,)
    return Prompt(text, tuple(kept), len(ids), (_cut_notice(tokenizer, len(ids), ids[:head], tail, limit, why), *typed))
