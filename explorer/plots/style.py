"""What every figure keeps to so that it reads at plotly's default size (``tests/test_figure_style.py`` checks it).

A page stretches a figure to its column, whose width the builder cannot know: figures are laid out for plotly's
default 700 px, a character of text taken as 0.6 x its font size. A title's first line says what the figure is;
detail and the untrained label go on a smaller line under it (:func:`titled`). Text written in heatmap cells has a
size of its own (plotly's automatic size shrinks it to the cell, to 2-3 px on a long text), cut to what fits a cell
(:func:`cell_chars`), or left to the hover when not even a few characters fit.

>>> titled("Logit lens of gpt2", "each layer's top prediction", untrained=True)
"Logit lens of gpt2<br><sup>each layer's top prediction (untrained: random weights)</sup>"
>>> titled("Model view", untrained=True)
'Model view<br><sup>untrained: random weights</sup>'
>>> cell_chars(16, row_labels=["0", "18"]), cell_chars(4)
(4, 10)
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from explorer.core.labels import UNTRAINED

__all__ = ["CELL_FONT", "COLORBAR", "DEFAULT_WIDTH", "MIN_FONT", "MOST_IN_CELL", "SUBPLOT_TITLE_FONT", "TICK_FONT",
           "cell_chars", "chars_in", "row_cells", "titled"]

DEFAULT_WIDTH = 700  # plotly's width when a figure sets none
CHAR = 0.6  # a character's width in font sizes (plotly's default font)
TICK_FONT = 12  # plotly's default text size: ticks, cells, annotations
CELL_FONT = 12  # text written in heatmap cells
MIN_FONT = 11  # no text smaller
COLORBAR = 90  # px a vertical colour bar takes with its tick labels
SUBPLOT_TITLE_FONT = 16  # plotly's size for make_subplots' titles
MOST_IN_CELL = 10  # a cell never shows more (the hover has the whole token)


def chars_in(px: float, font: float = TICK_FONT) -> int:
    """How many characters of text at ``font`` px fit ``px`` pixels.

    >>> chars_in(DEFAULT_WIDTH / 4, SUBPLOT_TITLE_FONT)
    18
    """
    return int(px / (CHAR * font))


def titled(main: str, *notes: str, untrained: bool = False) -> str:
    """``main``, with each of ``notes`` on a smaller line under it, the untrained label (when ``untrained``) after
    the last.

    >>> titled("gpt2, layer 0", "causal", "exact: 1 cell = 1 query/key pair")
    'gpt2, layer 0<br><sup>causal</sup><br><sup>exact: 1 cell = 1 query/key pair</sup>'
    """
    lines = [n for n in notes if n]
    if untrained:
        lines = [*lines[:-1], lines[-1] + UNTRAINED] if lines else [UNTRAINED.strip(" ()")]
    return "".join([main, *(f"<br><sup>{line}</sup>" for line in lines)])


def _plot_room(row_labels: Sequence[str], margin: int, colorbar: bool) -> float:
    """Pixels across a heatmap's cells at the default width: less the margins, the row labels (escaped text) and a
    colour bar."""
    labels = max((len(html.unescape(label)) for label in row_labels), default=0) * CHAR * TICK_FONT
    return DEFAULT_WIDTH - margin - labels - (COLORBAR if colorbar else 0)


def cell_chars(columns: int, *, row_labels: Sequence[str] = (), margin: int = 20, colorbar: bool = True,
               most: int = MOST_IN_CELL) -> int:
    """How many characters of ``CELL_FONT`` text fit one of ``columns`` heatmap cells across the default width;
    at most ``most``."""
    room = _plot_room(row_labels, margin, colorbar)
    return max(0, min(most, chars_in(room / max(columns, 1), CELL_FONT)))


def row_cells(chars: int, *, row_labels: Sequence[str] = (), margin: int = 20, colorbar: bool = True) -> int:
    """How many heatmap cells fit a row at the default width when each must show ``chars`` characters of
    ``CELL_FONT`` text.

    >>> row_cells(10, row_labels=["encoder input"], colorbar=False)
    8
    """
    return int(_plot_room(row_labels, margin, colorbar) // (max(chars, 1) * CHAR * CELL_FONT))
