"""Notices: what the library tells the user about a result (structured, not matched by prefix).

A result carries ``notices: tuple[Notice, ...]``; pages choose an icon by ``kind``; ``to_dict()`` and
the CLI print ``text`` (a ``Notice`` is also its text when formatted).

>>> n = Notice("truncated", "The text was cut to 512 tokens.")
>>> n.kind, str(n)
('truncated', 'The text was cut to 512 tokens.')
>>> texts((n, Notice("untrained", "Random weights.")))
['The text was cut to 512 tokens.', 'Random weights.']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["KINDS", "Notice", "NoticeKind", "texts"]

NoticeKind = Literal["truncated", "untrained", "dropped", "fallback", "missing", "stand-in", "offload", "info",
                     "stopped"]
KINDS: tuple[str, ...] = ("truncated", "untrained", "dropped", "fallback", "missing", "stand-in", "offload", "info",
                          # stopped: a server request's budget ran out (explorer.runtime.cancel): a partial result
                          "stopped")


@dataclass(frozen=True)
class Notice:
    """One thing worth telling the user: ``kind`` (one of ``KINDS``) and a sentence of ``text``."""

    kind: NoticeKind
    text: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown notice kind {self.kind!r}; expected one of {KINDS}")

    def __str__(self) -> str:
        return self.text


def texts(notices: Iterable[Notice | str]) -> list[str]:
    """The sentences alone (JSON output), in order."""
    return [str(n) for n in notices]
