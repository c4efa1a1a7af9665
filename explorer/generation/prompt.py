"""A typed prompt -> the token ids a decoder reads, cut to the usable window with a notice.

A decoder predicts from the *end* of its input, so an over-long prompt keeps its last tokens
(and the tokenizer's leading special tokens such as Gemma's ``<bos>``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.errors import ExplorerError
from explorer.generation.settings import MAX_PROMPT_TOKENS
from explorer.notices import Notice
from explorer.userinput import require_text

__all__ = ["MAX_PROMPT_CHARS", "Prompt", "context_limit", "encode_prompt"]

MAX_PROMPT_CHARS = 200_000  # beyond this the text is refused; below, it is cut to MAX_PROMPT_TOKENS tokens


@dataclass(frozen=True)
class Prompt:
    """The ids fed to the model and what the user should know about them."""

    text: str
    ids: tuple[int, ...]  # (T,) leading special tokens included
    total_tokens: int  # before cutting
    notices: tuple[Notice, ...]


def context_limit(model: Any, cap: int | None = None) -> int:
    """Tokens a prompt may have: the model's position limit, at most ``cap`` (``None``: the device's cap,
    :func:`explorer.limits.prompt_tokens`: 1,024 on a CPU, the context where KV caches fit on a GPU)."""
    limit = getattr(model.config, "max_position_embeddings", None) or getattr(model.config, "n_positions", None)
    if cap is None:
        cap = _device_cap(model, int(limit) if limit else None)
    return min(int(limit), cap) if limit else cap


def _device_cap(model: Any, context: int | None) -> int:
    from explorer import limits
    from explorer.offload import input_device

    if not hasattr(model, "parameters"):
        return MAX_PROMPT_TOKENS
    dtype = next((p.dtype for p in model.parameters()), None)
    kv = limits.kv_bytes_per_token(model.config, getattr(dtype, "itemsize", 4))
    return limits.prompt_tokens(limits.device_facts(input_device(model)), context, kv).value


def _leading_specials(ids: list[int], special: set[int]) -> int:
    count = 0
    while count < len(ids) and ids[count] in special:
        count += 1
    return count


def encode_prompt(tokenizer: Any, text: str, limit: int) -> Prompt:
    """Token ids of ``text`` (special tokens added as the model was trained), at most ``limit``."""
    text = require_text(text, what="prompt", empty_hint="type a few words for the model to continue.",
                        max_chars=MAX_PROMPT_CHARS, limit_note="longer prompts are cut to the last tokens anyway")
    ids = list(tokenizer(text, add_special_tokens=True)["input_ids"])
    if not ids:
        raise ExplorerError("The prompt gave no tokens: type some words.")
    if len(ids) <= limit:
        return Prompt(text, tuple(ids), len(ids), ())
    head = _leading_specials(ids, set(tokenizer.all_special_ids))
    kept = ids[:head] + ids[len(ids) - (limit - head):]
    note = Notice("truncated", f"The prompt has {len(ids):,} tokens; only its last {limit - head:,} are used "
                               f"(the model reads at most {limit:,} here), so the beginning was cut.")
    return Prompt(text, tuple(kept), len(ids), (note,))
