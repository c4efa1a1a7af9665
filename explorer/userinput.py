"""Checks for text typed by users, shared by every area that takes a text box."""

from __future__ import annotations

from explorer.errors import ExplorerError


def require_text(text: object, *, what: str, empty_hint: str, max_chars: int, limit_note: str) -> str:
    """``text`` if it is a non-blank string of at most ``max_chars``, else an ExplorerError.

    ``empty_hint`` finishes "The {what} is empty: ..."; ``limit_note`` explains the limit.
    """
    if not isinstance(text, str):
        raise ExplorerError(f"The {what} must be a string, not {type(text).__name__}.")
    if not text.strip():
        raise ExplorerError(f"The {what} is empty: {empty_hint}")
    if len(text) > max_chars:
        raise ExplorerError(f"The {what} has {len(text):,} characters; paste at most {max_chars:,} ({limit_note}).")
    return text
