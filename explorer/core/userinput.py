"""Checks for what users type into text boxes, shared by every area (pages and CLI alike).

- :func:`require_text`: a non-blank string of bounded length (texts to run through a model).
- :func:`split_blanks`: a text with blanks -> the pieces between them, with one grammar of blanks:
  :data:`MARKER` (``[MASK]``, ``<mask>``, ``___``, any case) everywhere, plus T5's ``<extra_id_N>`` where
  spans are filled (:data:`SPAN_MARKER`). Each caller passes its own cap on the number of blanks.
- :func:`parse_positions`: token positions such as ``"5, 17"`` (Longformer's global tokens), with
  one rule set everywhere: whole ASCII numbers separated by commas, semicolons or spaces, at most
  :data:`MAX_POSITIONS` of them, each inside ``0 .. seq_len - 1``.

>>> parse_positions("17, 5;5 0", seq_len=100)
(0, 5, 17)
>>> parse_positions("", seq_len=100)
()
>>> require_text("  hello ", what="text", empty_hint="type a sentence.", max_chars=10, limit_note="demo")
'  hello '
>>> split_blanks("Thank you ___ me to your [mask] party.", max_blanks=5, max_chars=100)
('Thank you ', ' me to your ', ' party.')
>>> split_blanks("a <extra_id_0> b", max_blanks=5, max_chars=100, marker=SPAN_MARKER)
('a ', ' b')
"""

from __future__ import annotations

import re

from explorer.core.errors import ExplorerError
from explorer.core.limits import POSITIONS_LIST_CHARS

__all__ = ["GENERIC_BLANK", "MARKER", "MAX_POSITIONS", "SENTINEL", "SPAN_MARKER",
           "first_blank_only", "parse_positions", "require_text", "split_blanks"]

# What users type for "a blank here", on every page: BERT's [MASK], RoBERTa/BART's <mask>, or three or
# more underscores. Case does not matter: someone who types [mask] or <MASK> means a blank (no model's
# word is spelled that way), and a case-sensitive rule silently sent "[mask]" to the model as text.
MARKER = re.compile(r"\[mask\]|<mask>|_{3,}", re.IGNORECASE)
GENERIC_BLANK = "___"  # the marker messages ask for, and the one a prompt is rebuilt with
# T5's span sentinel, as users type it. Span infilling takes it as one more blank (T5 prompts are written
# that way, and its pieces are renumbered anyway); fill-mask refuses it with its own message
# (explorer.tasks.fillmask.prompt.FOREIGN_MASKS): a sentinel stands for a span of words, not one token.
SENTINEL = r"<extra_id_\d+>"
SPAN_MARKER = re.compile(rf"{MARKER.pattern}|{SENTINEL}", re.IGNORECASE)

MAX_POSITIONS = 64  # more global tokens than this is no longer "a few": Longformer's cost grows per token
_SHOWN = 20  # characters of a refused piece quoted back (never a pasted novel)


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


def _shown(piece: str) -> str:
    """A refused piece, cut short, quoted with repr (so markup and control characters stay visible)."""
    return repr(piece if len(piece) <= _SHOWN else piece[:_SHOWN] + "...")


def parse_positions(text: object, seq_len: int, *, what: str = "global token positions") -> tuple[int, ...]:
    """Token positions typed by a user -> sorted unique ints in ``[0, seq_len)``.

    ``None`` or blank text means none. Anything else than whole ASCII numbers (words, emoji,
    markup, Arabic-Indic digits, signs, decimals) is refused with a message that names the
    allowed range and quotes at most a short piece of the input.
    """
    if int(seq_len) < 1:
        raise ValueError(f"seq_len must be positive, got {seq_len}")
    allowed = f"whole numbers from 0 to {seq_len - 1} separated by commas, such as 5, 17"
    if text is None:
        return ()
    if not isinstance(text, str):
        raise ExplorerError(f"The {what} must be text, not {type(text).__name__}: type {allowed}.")
    if len(text) > POSITIONS_LIST_CHARS:
        raise ExplorerError(f"The {what} are {len(text):,} characters long: type at most "
                            f"{MAX_POSITIONS} {allowed}.")
    pieces = text.replace(",", " ").replace(";", " ").split()
    bad = [p for p in pieces if not (p.isascii() and p.isdigit())]
    if bad:
        raise ExplorerError(f"{_shown(bad[0])} is not a token position: type {allowed}.")
    positions = sorted({int(p) for p in pieces})
    if len(positions) > MAX_POSITIONS:
        raise ExplorerError(f"That is {len(positions)} {what}: pick at most {MAX_POSITIONS}.")
    if positions and positions[-1] >= seq_len:
        raise ExplorerError(f"Position {positions[-1]} is past the end of a {seq_len:,}-token input: "
                            f"type {allowed}.")
    return tuple(positions)


def split_blanks(text: object, *, max_blanks: int, max_chars: int, marker: re.Pattern[str] = MARKER,
                 what: str = "text", why_cap: str = "") -> tuple[str, ...]:
    """The text around its blanks: n blanks -> n + 1 pieces (possibly empty). Bad input -> ExplorerError.

    ``max_blanks`` is the caller's cap (a decoder reads the text once per blank, T5 and BART fill them
    all in one generation) and ``why_cap`` its reason, shown when the cap is passed; ``marker`` is
    :data:`MARKER`, or :data:`SPAN_MARKER` where T5 sentinels are blanks too.
    """
    if not isinstance(text, str):
        raise ExplorerError(f"The {what} must be a string, not {type(text).__name__}.")
    if not text.strip():
        raise ExplorerError(f"The {what} is empty: type a sentence and put {GENERIC_BLANK} where words are missing.")
    if len(text) > max_chars:
        raise ExplorerError(f"The {what} has {len(text):,} characters; the limit is {max_chars:,}. "
                            "Shorten it around the blanks.")
    pieces = tuple(marker.split(text))
    n = len(pieces) - 1
    if n == 0:
        native = "[MASK], <mask> or <extra_id_0>" if marker is SPAN_MARKER else "[MASK] or <mask>"
        raise ExplorerError(f"No blank in the {what}: put {GENERIC_BLANK} (or {native}) where the missing "
                            "words go.")
    if n > max_blanks:
        why = f" ({why_cap})" if why_cap else ""
        raise ExplorerError(f"The {what} has {n} blanks; the limit is {max_blanks}{why}. Remove some.")
    return pieces


def first_blank_only(text: str, marker: re.Pattern[str] = SPAN_MARKER) -> str:
    """``text`` up to its second blank: a question about its first blank alone (what is explained one blank at a
    time, e.g. the Spans page's link to Why this prediction).

    >>> first_blank_only("Thank you ___ me to your party ___ week.")
    'Thank you ___ me to your party'
    >>> first_blank_only("One ___ only.")
    'One ___ only.'
    """
    found = list(marker.finditer(text))
    return text if len(found) < 2 else text[:found[1].start()].rstrip()
