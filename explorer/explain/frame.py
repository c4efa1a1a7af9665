"""One explained question as the model reads it: its input rows, the tokens shown, the log-probabilities summed.

Every task comes down to the same shape, so one scorer and one set of attribution methods serve them all:

- ``rows``: the token ids whose embeddings are attributed, one row per model input (S rows). A foil gets its
  own row beside the target's (a decoder reads ``text + target`` and ``text + foil``); a sentence pair has one
  row per sentence; an encoder-decoder's rows are the encoder's, each with its ``decoder`` row;
- ``shown``: the tokens the user sees, each at one or more ``places`` (row, index): the text's tokens are the
  same in the target's and the foil's row, and their share is the sum over their places;
- ``terms``: the explained number is ``sum(sign * log p(token at its position))`` over the terms (the target's
  with sign +1, the foil's with -1); a sentence pair has none: its number is the cosine of the two rows'
  embeddings.

Leaving a shown token out (:meth:`Frame.without`) deletes it from every row and moves the positions behind it.

>>> f = Frame("next-token", "causal", rows=((2, 10, 11, 12),), decoder=(), terms=(Term(0, 3, 12, 1.0),),
...           shown=(Shown("a", 0, ((0, 1),)), Shown("b", 0, ((0, 2),))), baseline_id=0, objective="demo")
>>> g = f.without(0)
>>> g.rows, g.terms[0].at, [s.places for s in g.shown]
(((2, 11, 12),), 2, [((0, 1),)])
>>> f.baseline_rows()
((2, 0, 0, 12),)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from explorer.core.notices import Notice
from explorer.explain.target import Target

__all__ = ["KINDS", "Frame", "Shown", "Term"]

KINDS = ("causal", "masked", "seq2seq", "pair")


@dataclass(frozen=True)
class Term:
    """``sign * log p(token)`` at position ``at`` of a row (of the decoder's row for an encoder-decoder); a causal
    model and a decoder read it off the logits one position before, a masked LM at the position itself."""

    row: int
    at: int
    token: int
    sign: float


@dataclass(frozen=True)
class Shown:
    """A token the user sees: its text, which sentence it is in (``part``: 0, or 1 for a pair's second), and
    where it is in the rows."""

    text: str
    part: int
    places: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Frame:
    """See the module docstring. ``focus`` is where the lens reads (the position whose prediction is the target's
    first token, in row 0, or in decoder row 0), ``None`` for a pair."""

    task: str
    kind: str  # one of KINDS
    rows: tuple[tuple[int, ...], ...]
    decoder: tuple[tuple[int, ...], ...]
    terms: tuple[Term, ...]
    shown: tuple[Shown, ...]
    baseline_id: int  # the token whose embedding stands for "no token" (padding) in the baseline
    objective: str  # the explained number in words
    target: Target | None = None
    foil: Target | None = None
    notices: tuple[Notice, ...] = ()
    focus: int | None = None

    @property
    def shift(self) -> int:
        """How far before a term's position its logits are read (1: next-token prediction; 0: a masked LM)."""
        return 0 if self.kind == "masked" else 1

    @property
    def tokens(self) -> int:
        """Input tokens over every row (decoder rows included): what one pass reads."""
        return sum(len(r) for r in self.rows) + sum(len(r) for r in self.decoder)

    def without(self, k: int) -> Frame:
        """The frame with shown token ``k`` left out of every row (positions behind it move forward)."""
        gone = {(row, i) for row, i in self.shown[k].places}

        def moved(row: int, i: int) -> int:
            return i - sum(1 for r, j in gone if r == row and j < i)

        rows = tuple(tuple(t for i, t in enumerate(ids) if (r, i) not in gone) for r, ids in enumerate(self.rows))
        terms = self.terms if self.kind == "seq2seq" else tuple(replace(t, at=moved(t.row, t.at)) for t in self.terms)
        shown = tuple(replace(s, places=tuple((r, moved(r, i)) for r, i in s.places))
                      for j, s in enumerate(self.shown) if j != k)
        return replace(self, rows=rows, terms=terms, shown=shown)

    def baseline_rows(self) -> tuple[tuple[int, ...], ...]:
        """The rows with every shown token replaced by :attr:`baseline_id` (special tokens and the target stay)."""
        places = {p for s in self.shown for p in s.places}
        return tuple(tuple(self.baseline_id if (r, i) in places else t for i, t in enumerate(ids))
                     for r, ids in enumerate(self.rows))
