"""One style over every figure the pages draw: each builder of ``explorer/plots/*.py`` is drawn on small inputs
(``tests/figure_cases.py``) and checked against rules a reader can see at plotly's default size.

Sizes are estimated, not rendered: a line of text is ``0.6 x font size`` pixels a character (plotly's default
font, Open Sans / Arial, averages a little less), ``<sup>``/``<sub>`` text 0.7 of its line's size, entities
(``&lt;``) one character. The figure is ``layout.width`` wide, or plotly's default 700 px when unset (the pages
stretch a figure to its column: 700 px is a column of a wide page, or half of it). Font sizes: plotly's defaults,
12 px (ticks, cell text, annotations), 17 px (the title: 1.4 x 12), 16 px (a subplot's title).

The rules:

- **Titles fit**: every line of the title fits from where plotly starts it (``title.x``, 5% of the width by
  default) to the right edge; a subplot's title fits its share of the width (width / columns); any other annotation
  fits the width.
- **Readable text**: every font a figure sets (ticks, trace text, legend, annotations, the title and its
  ``<sup>`` line) is at least ``MIN_FONT`` px; a heatmap that writes text in its cells sets the size itself
  (plotly's automatic size shrinks the text to the cell, to 2-3 px on a long text) and that text fits its cell:
  the plot area (width less the margins, the row labels and a colour bar) over the columns.
- **No row silently disappears**: an axis whose data are strings any of which plotly reads as a number (``"1"``,
  ``"2,048"``, ``"80%"``: it strips ``$ , %`` and spaces) is declared ``type="category"``. Left to guess, plotly
  makes the axis linear as soon as numbers outnumber the other labels two to one, and drops the rest: the lens
  grid's "0 (embeddings)" beside layers "1".."18".
- **Log axes hold positive data only**: no value on a log axis is 0 or negative (it is not drawn at all).
- **Numeric axes are titled**: every visible axis that carries numbers (not category labels, not ``ticktext``)
  and shows its tick labels has a title.
"""

from __future__ import annotations

import html
import importlib
import inspect
import math
import pkgutil
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

import explorer.plots
from tests.figure_cases import CASES

DEFAULT_WIDTH = 700  # plotly's default figure width
CHAR = 0.6  # a character's width, in font sizes
SUP = 0.7  # <sup> and <sub> text, relative to its line
BASE_FONT, TITLE_FONT, SUBPLOT_TITLE_FONT = 12, 17, 16
MIN_FONT = 11
DEFAULT_MARGIN = 80  # plotly's margin on each side when unset
COLORBAR = 90  # a vertical colour bar with its tick labels
JUNK = re.compile(r"^['\"%,$#\s]+|[, ]|['\"%,$#\s]+$")  # what plotly strips before reading a string as a number


def _numeric(value: object) -> bool:
    """Whether plotly's ``cleanNumber`` reads ``value`` as a number (its category/linear guess counts these)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float | np.number):
        return True
    if not isinstance(value, str):
        return False
    try:
        float(JUNK.sub("", value))
    except ValueError:
        return False
    return True


def _lines(text: str, size: float) -> list[tuple[str, float]]:
    """Each line of a plotly label as (plain text, pixels wide): ``<br>`` breaks it, ``<sup>`` is smaller."""
    out = []
    for line in re.split(r"<br\s*/?>", text, flags=re.IGNORECASE):
        small = sum(len(html.unescape(re.sub(r"<[^>]+>", "", m))) for m in re.findall(r"<su[pb]>(.*?)</su[pb]>", line))
        plain = html.unescape(re.sub(r"<[^>]+>", "", line))
        out.append((plain, CHAR * size * (len(plain) - small + SUP * small)))
    return out


def _sup_only(line: str) -> bool:
    return bool(re.fullmatch(r"\s*<su[pb]>.*</su[pb]>\s*", line))


def _layout(fig: go.Figure) -> dict[str, Any]:
    return fig.to_plotly_json()["layout"]


def _width(fig: go.Figure) -> float:
    return float(fig.layout.width or DEFAULT_WIDTH)


def _margin(fig: go.Figure, side: str) -> float:
    value = getattr(fig.layout.margin, side)
    return float(DEFAULT_MARGIN if value is None else value)


def _columns(fig: go.Figure) -> int:
    grid = getattr(fig, "_grid_ref", None)
    return len(grid[0]) if grid else 1


def title_problems(fig: go.Figure) -> list[str]:
    width = _width(fig)
    out = []
    title = fig.layout.title
    if title.text:
        size = title.font.size or TITLE_FONT
        x = 0.5 if title.xanchor == "center" else (title.x if title.x is not None else 0.05)
        room = width * (1 - x) if title.xanchor != "center" else width
        for plain, px in _lines(title.text, size):
            if px > room:
                out.append(f"title line {plain!r} is ~{px:.0f} px, {room:.0f} px fit")
    for note in fig.layout.annotations:
        if not note.text:
            continue
        subplot = (note.xanchor, note.yanchor, note.xref, note.showarrow) == ("center", "bottom", "paper", False)
        room = width / _columns(fig) if subplot else width
        for plain, px in _lines(note.text, note.font.size or (SUBPLOT_TITLE_FONT if subplot else BASE_FONT)):
            if px > room:
                out.append(f"annotation {plain!r} is ~{px:.0f} px, {room:.0f} px fit")
    return out


def _fonts(layout: dict[str, Any], data: list[dict[str, Any]]) -> Iterator[tuple[str, float]]:
    """Every font size the figure sets, with where."""
    for key in ("font", "legend"):
        part = layout.get(key) or {}
        size = part.get("size") if key == "font" else (part.get("font") or {}).get("size")
        if size is not None:
            yield key, size
    for name, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", name) and (axis.get("tickfont") or {}).get("size") is not None:
            yield f"{name}.tickfont", axis["tickfont"]["size"]
    for note in layout.get("annotations") or ():
        if (note.get("font") or {}).get("size") is not None:
            yield f"annotation {note.get('text')!r}", note["font"]["size"]
    for i, trace in enumerate(data):
        size = (trace.get("textfont") or {}).get("size")
        for s in np.ravel(np.asarray(size, dtype=object)) if size is not None else ():
            yield f"trace {i} ({trace.get('type')}) textfont", s


def font_problems(fig: go.Figure) -> list[str]:
    layout = _layout(fig)
    data = fig.to_plotly_json()["data"]
    out = [f"{where} is {size} px" for where, size in _fonts(layout, data) if float(size) < MIN_FONT]
    title = fig.layout.title
    size = title.font.size or TITLE_FONT
    if title.text and "<sup>" in title.text and SUP * size < MIN_FONT:
        out.append(f"the title's <sup> line is {SUP * size:.1f} px")
    if title.text and size < MIN_FONT:
        out.append(f"the title is {size} px")
    for i, trace in enumerate(fig.data):
        if trace.type == "heatmap" and _cell_text(trace) is not None:
            out += [f"heatmap {i}: {p}" for p in _cell_problems(fig, trace)]
    return out


def _cell_text(trace: Any) -> list[list[str]] | None:
    """The text a heatmap writes in its cells (None: it writes none)."""
    template = trace.texttemplate
    if not template:
        return None
    if template == "%{text}":
        return [[str(t) for t in row] for row in (trace.text if trace.text is not None else [])]
    found = re.fullmatch(r"%\{z(?::([^}]*))?\}", template)
    if not found:
        return [[template]]
    fmt = found.group(1) or ""
    return [[format(float(v), fmt) if v is not None and not math.isnan(float(v)) else "" for v in row]
            for row in np.asarray(trace.z, dtype=object)]


def _cell_problems(fig: go.Figure, trace: Any) -> list[str]:
    size = trace.textfont.size
    if size is None:
        return ["cell text has no font size (plotly shrinks it to fit the cell)"]
    text = _cell_text(trace) or []
    columns = max((len(row) for row in text), default=0)
    if not columns:
        return []
    ticks = [str(y) for y in (trace.y if trace.y is not None else ())]
    rows = max((len(html.unescape(t)) for t in ticks), default=2) * CHAR * BASE_FONT
    bar = COLORBAR if trace.showscale is not False else 0
    plot = _width(fig) - _margin(fig, "l") - _margin(fig, "r") - rows - bar
    cell = plot / columns
    widest = max((len(html.unescape(t)) for row in text for t in row), default=0)
    need = widest * CHAR * size
    return [f"cell text of {widest} characters is ~{need:.0f} px, cells ~{cell:.0f} px"] if need > cell else []


def _axes_of(trace: Any) -> list[tuple[str, str]]:
    """(data key, layout axis name) of a cartesian trace: ``("x", "xaxis2")``."""
    if trace.type in ("scatter3d", "treemap", "sunburst", "pie") or not hasattr(trace, "xaxis"):
        return []
    out = []
    for key in ("x", "y"):
        ref = getattr(trace, f"{key}axis") or key
        out.append((key, f"{key}axis{ref[1:]}"))
    return out


def _values(trace: Any, key: str) -> list[object]:
    data = getattr(trace, key)
    if data is None:
        return []
    arr = np.asarray(data, dtype=object)
    return list(arr.ravel()) if arr.ndim else [arr.item()]


def category_problems(fig: go.Figure) -> list[str]:
    out = []
    for i, trace in enumerate(fig.data):
        for key, axis in _axes_of(trace):
            values = [v for v in _values(trace, key) if v is not None]
            strings = [v for v in values if isinstance(v, str)]
            numeric = [v for v in strings if _numeric(v)]
            if numeric and fig.layout[axis].type not in ("category", "multicategory"):
                out.append(f"trace {i} puts labels {numeric[:3]} that read as numbers on {axis} "
                           f"(type {fig.layout[axis].type!r}): declare it a category axis")
    return out


def log_problems(fig: go.Figure) -> list[str]:
    out = []
    for i, trace in enumerate(fig.data):
        for key, axis in _axes_of(trace):
            if fig.layout[axis].type != "log":
                continue
            bad = [v for v in _values(trace, key) if _numeric(v) and not isinstance(v, str)
                   and math.isfinite(float(v)) and float(v) <= 0]  # type: ignore[arg-type]
            if bad:
                out.append(f"trace {i} has {bad[:3]} on the log axis {axis}: plotly cannot draw them")
    return out


def axis_title_problems(fig: go.Figure) -> list[str]:
    numeric: set[str] = set()
    for trace in fig.data:
        for key, axis in _axes_of(trace):
            values = [v for v in _values(trace, key) if v is not None]
            if values and not any(isinstance(v, str) for v in values):
                numeric.add(axis)
    out = []
    for axis in sorted(numeric):
        lay = fig.layout[axis]
        hidden = lay.visible is False or lay.showticklabels is False or lay.ticktext is not None
        if not hidden and lay.type != "category" and not (lay.title and lay.title.text):
            out.append(f"{axis} carries numbers and has no title")
    return out


RULES: dict[str, Callable[[go.Figure], list[str]]] = {
    "titles fit": title_problems, "readable text": font_problems, "categories declared": category_problems,
    "log axes positive": log_problems, "numeric axes titled": axis_title_problems,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_figure_keeps_the_style(case: str) -> None:
    fig = CASES[case]()
    assert isinstance(fig, go.Figure)
    problems = {rule: found for rule, check in RULES.items() if (found := check(fig))}
    assert problems == {}


def _builders() -> set[str]:
    """Every public function of ``explorer/plots/*.py`` that returns a figure, as ``module.function``."""
    found = set()
    for info in pkgutil.iter_modules(explorer.plots.__path__):
        module = importlib.import_module(f"explorer.plots.{info.name}")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ == module.__name__ and not name.startswith("_") and \
                    inspect.signature(fn).return_annotation in ("go.Figure", go.Figure):
                found.add(f"{info.name}.{name}")
    return found


def test_every_figure_builder_has_a_case() -> None:
    """A new builder in explorer/plots is drawn here too: add its case to tests/figure_cases.py."""
    drawn = {case.split(":")[0] for case in CASES}
    assert _builders() - drawn == set()
    assert drawn - _builders() == set()  # a case of a builder that no longer exists


def test_the_rules_catch_what_they_are_for() -> None:
    """Each rule fails on the figure it is about: the lens grid's layer labels on a guessed axis, a cut title,
    auto-sized cell text, a 0 on a log axis, an untitled numeric axis."""
    layers = ["0 (embeddings)", *map(str, range(1, 19))]
    guessed = go.Figure(go.Heatmap(z=[[0.5]] * 19, y=layers, x=["a"]))
    assert category_problems(guessed) and not category_problems(guessed.update_yaxes(type="category"))
    assert title_problems(go.Figure().update_layout(title="x" * 80))
    assert not title_problems(go.Figure().update_layout(title="x" * 60 + "<br><sup>" + "y" * 90 + "</sup>"))
    auto = go.Figure(go.Heatmap(z=[[1, 2]], text=[["a", "b"]], texttemplate="%{text}", y=["r"]))
    assert font_problems(auto) and not font_problems(auto.update_traces(textfont={"size": 12}))
    assert log_problems(go.Figure(go.Scatter(x=[1, 2], y=[1.0, 0.0])).update_yaxes(type="log"))
    assert axis_title_problems(go.Figure(go.Scatter(x=[1, 2], y=[1, 2])).update_xaxes(title="x"))
    assert _numeric("2,048") and _numeric(" 80% ") and not _numeric("0 (embeddings)") and not _numeric("1 the")
