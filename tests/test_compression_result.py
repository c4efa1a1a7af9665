"""explorer.compression.result: a study's ratios to the original are computed once, with no ratio (None) where the
original's figure is zero, absent or not finite, and the chart and the page's table read them."""

from __future__ import annotations

import math

import pytest

from explorer.compression.quality import Quality
from explorer.compression.result import Ratios, Row, Study, ratio
from explorer.plots import compression as plots


def _row(method: str, size: int, latency: float, baseline_latency: float, value: float, baseline_value: float) -> Row:
    return Row(method, "", size, size, latency, 1.0, baseline_latency, Quality("perplexity", value, baseline_value),
               0.0, "answer")


def _study(original: Row, *rows: Row) -> Study:
    return Study("m", "M", True, "cpu", "cpu", "float32", "tokens/s", "p", original, rows)


def test_ratios_of_an_ordinary_study() -> None:
    s = _study(_row("original", 100, 10.0, 10.0, 20.0, 20.0), _row("int8", 25, 5.0, 10.0, 22.0, 20.0))
    assert s.ratios == (Ratios(0.25, 0.5, 1.1),)


@pytest.mark.parametrize(("base", "expected"), [(0.0, None), (None, None), (math.inf, None), (math.nan, None),
                                                (-2.0, -0.5)])
def test_no_ratio_to_a_zero_absent_or_infinite_original(base, expected) -> None:
    assert ratio(1.0, base) == expected
    assert ratio(math.inf, 2.0) is None


def test_a_zero_original_gives_no_ratio_and_no_crash() -> None:
    """An original of 0 bytes, timed at 0 ms, with an infinite perplexity: every ratio is None, the chart draws
    the copy at "as fast" and the table leaves the ratio cells empty."""
    s = _study(_row("original", 0, 0.0, 0.0, math.inf, math.inf), _row("int8", 25, 5.0, 0.0, 22.0, math.inf))
    assert s.ratios == (Ratios(None, None, None),)
    assert plots.points(s)[1][2] == 1.0
    row = plots.table_rows(s)[0]
    assert row["× size"] is None and row["× latency"] is None
    assert plots.tradeoff_figure(s).data


def test_ratios_follow_replace() -> None:
    from dataclasses import replace

    s = _study(_row("original", 100, 10.0, 10.0, 20.0, 20.0))
    grown = replace(s, rows=(_row("bf16", 50, 10.0, 10.0, 20.0, 20.0),))
    assert s.ratios == () and grown.ratios == (Ratios(0.5, 1.0, 1.0),)
