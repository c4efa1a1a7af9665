"""Labels shown with results: the one UNTRAINED label and the escapers for user text.

User text never becomes markup: plotly renders a subset of HTML in labels (:func:`safe_label`),
and Streamlit renders markdown, LaTeX and colour directives (:func:`escape_markdown`).

>>> safe_label("<b>bold</b> and a very long sentence indeed", 20)
'&lt;b&gt;bold&lt;/b&gt; and a v…'
>>> escape_markdown("*not italic* $x$")
'\\\\*not italic\\\\* \\\\$x\\\\$'
>>> escape_markdown("open `data/*x*` now", keep_code=True)
'open `data/*x*` now'
>>> token_labels(["[CLS]", "<b>", "[CLS]"], offset=3)
['3 [CLS]', '4 &lt;b&gt;', '5 [CLS]']
"""

from __future__ import annotations

import html
from collections.abc import Sequence

__all__ = ["UNTRAINED", "UNTRAINED_NOTE", "escape_markdown", "safe_label", "token_labels", "untrained_suffix"]

UNTRAINED = " (untrained: random weights)"  # appended to figure titles of random-weight results
UNTRAINED_NOTE = "Untrained weights: predictions are noise from a randomly initialised model."

_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:&=\"'/^%@")


def untrained_suffix(untrained: bool) -> str:
    """``UNTRAINED`` when the result comes from random weights, else ``""``."""
    return UNTRAINED if untrained else ""


def safe_label(text: str, width: int = 40) -> str:
    """Shorten user text to ``width`` characters and escape it so plotly shows tags literally."""
    text = " ".join(str(text).split())
    short = text if len(text) <= width else text[: width - 1] + "…"
    return html.escape(short, quote=False)


def token_labels(tokens: Sequence[str], offset: int = 0) -> list[str]:
    """Unique, escaped axis labels ``"<position> <token>"`` for heatmaps of tokens.

    The position makes repeated tokens distinct (plotly merges equal categories into one row);
    the escape keeps user text from becoming plotly markup. ``offset``: position of the first token
    when the axis shows a window of a longer text.
    """
    return [f"{offset + i} {html.escape(t)}" for i, t in enumerate(tokens)]


def _escape_flat(text: str) -> str:
    """Backslash-escape every markdown-significant character; whitespace runs become one space
    (a leading or trailing space is kept so pieces join cleanly)."""
    raw = str(text)
    flat = " ".join(raw.split())
    if flat and raw[:1].isspace():
        flat = " " + flat
    if flat and raw[-1:].isspace():
        flat += " "
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in flat)


def escape_markdown(text: str, *, keep_code: bool = False) -> str:
    """Text that Streamlit's markdown shows exactly as typed.

    ``keep_code=True`` leaves `code spans` as they are (error messages quote paths in backticks,
    and inside a code span nothing is interpreted anyway).
    """
    if not keep_code:
        return _escape_flat(text)
    parts = str(text).split("`")
    for i in range(0, len(parts), 2):  # even parts are outside backticks
        parts[i] = _escape_flat(parts[i])
    return "`".join(parts)
