"""What a failed exchange with an engine says: one :class:`ServedError` per way, and the server's own words cut
to a short, clean excerpt.

An engine's error body can be its whole traceback, with the file paths of the machine it runs on, HTML from a
proxy, or the key it was sent; on a shared server none of that is for visitors. :func:`excerpt` keeps the line
that says what went wrong (a traceback's last line), drops markup and control characters, cuts every file path
to its last part and every key-like word to its first letters, and shortens the rest to one line.

>>> excerpt('Traceback (most recent call last):\\n  File "/opt/srv/app.py", line 3, in f\\nValueError: bad prompt')
'ValueError: bad prompt'
>>> excerpt("<html><body><h1>502 Bad Gateway</h1></body></html>")
'502 Bad Gateway'
>>> excerpt("cannot open /srv/models/secret/model.gguf: denied")
'cannot open …/model.gguf: denied'
>>> excerpt("Incorrect API key provided: sk-abcdef1234567890")
'Incorrect API key provided: sk-…'
"""

from __future__ import annotations

import re

from explorer.core.errors import ExplorerError, shorten

__all__ = ["EXCERPT_LENGTH", "ServedError", "excerpt"]

EXCERPT_LENGTH = 160  # of a server's own words in a message
_TRACEBACK = "Traceback (most recent call last)"
_TAG = re.compile(r"<[^<>]{0,300}>")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
# a file path: /a/b, ~/a/b, C:\a\b, file:///a (not a web URL's path); only its last part is kept
_PATH = re.compile(r"(?<![\w.:/\\])(?:file://)?(?:~|[A-Za-z]:)?(?:[/\\][\w.@+=,~-]+){2,}")
# a key or token: sk-..., hf_..., Bearer ..., key=..., token=...
_KEY = re.compile(r"\b((?:sk|pk|rk|hf|gsk|xai|api|key)[-_])[A-Za-z0-9_-]{6,}|\b(Bearer\s+)\S+"
                  r"|\b((?:api_?key|key|token|access_token|password|secret)\s*[=:]\s*)[^\s&;,'\"]+", re.IGNORECASE)


class ServedError(ExplorerError):
    """A served call that failed; ``kind`` says how ("refused", "timeout", "dropped", "status", "garbage",
    "model", "busy", "missing")."""

    def __init__(self, message: str, kind: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind, self.status = kind, status


def _last_part(match: re.Match[str]) -> str:
    return "…/" + re.split(r"[/\\]", match.group(0))[-1]


def _hide_key(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g is not None) + "…"


def excerpt(text: str, limit: int = EXCERPT_LENGTH) -> str:
    """A server's words safe to show: the error line of a traceback, no markup, paths and keys cut, one line."""
    if _TRACEBACK in text:
        lines = [line for line in text.splitlines() if line.strip()]
        said = [line for line in lines if not line.startswith((" ", "\t", _TRACEBACK))]
        text = said[-1] if said else "(a traceback)"
    text = _CONTROL.sub(" ", _TAG.sub(" ", text))
    text = _KEY.sub(_hide_key, _PATH.sub(_last_part, text))
    return shorten(" ".join(text.split()), limit)
