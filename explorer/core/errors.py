"""The one error type of the library.

Every message says what went wrong *and what the user can do about it*; pages show it
with ``st.error`` and the CLI prints it on one line and exits non-zero.
"""

from __future__ import annotations

from explorer.core.limits import ECHO_CHARS

__all__ = ["ExplorerError", "shorten"]


class ExplorerError(Exception):
    """A problem the user can fix (bad input, missing weights, unknown variant...)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:  # one line, always
        return " ".join(self.message.split())


def shorten(value: object, limit: int = ECHO_CHARS) -> str:
    """``value`` as text, cut to ``limit`` characters (an ellipsis and the full length say it was cut),
    so a message never repeats 10,000 characters a user pasted.

    >>> shorten("bert-base")
    'bert-base'
    >>> shorten("x" * 10_000, 8)
    'xxxxxxxx… (10,000 characters)'
    """
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"
