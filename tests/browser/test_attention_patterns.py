"""Real browser: the sparse-patterns page draws, reacts to its widgets and keeps the view in the URL."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_clean, wait_idle, wait_url

pytestmark = pytest.mark.browser


def _ready(page) -> None:
    """The first run can start late on a busy machine: wait for the page's last element."""
    page.wait_for_selector("text=Scaling with sequence length", timeout=90_000)
    page.locator("[data-testid='stPlotlyChart'] .main-svg").last.wait_for(timeout=90_000)
    wait_idle(page)


def _set_number(page, label: str, value: int) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")
    wait_idle(page)


def test_patterns_page_interactions(open_page) -> None:
    page = open_page("patterns?variants=bigbird,gpt-neo,longformer&len=705")
    _ready(page)
    assert_clean(page, "patterns_initial")
    charts = page.locator("[data-testid='stPlotlyChart']")
    assert charts.count() == 4  # three heatmaps and the cost chart
    assert page.locator(".main-svg").count() >= 4  # plotly really drew them

    _set_number(page, "Sequence length (tokens)", 704)  # BigBird falls back to full attention
    assert "falls back to full" in page.locator("[data-testid='stCaptionContainer']").all_inner_texts().__str__()
    assert "len=704" in page.url

    _set_number(page, "Layer (alternating / per-layer patterns)", 1)  # GPT-Neo local layer
    titles = page.locator("[data-testid='stPlotlyChart'] .gtitle").all_text_contents()
    assert any("GPT-Neo 1.3B, layer 1" in t and "local (window 256)" in t for t in titles), titles

    box = page.get_by_label("Longformer global tokens (positions, e.g. 5, 17)", exact=True)
    box.fill("<script>alert(1)</script>")
    box.press("Enter")
    wait_idle(page)
    page.locator("[data-testid='stAlertContentError']").first.wait_for(timeout=60_000)
    assert "from 0 to 703" in page.locator("[data-testid='stAlertContentError']").first.inner_text()  # the range
    assert page.locator("script:text('alert(1)')").count() == 0  # shown as text, never injected
    box.fill("5, 17")
    box.press("Enter")
    wait_idle(page)
    wait_url(page, "globals=5%2C17", "globals=5,17")
    assert_clean(page, "patterns_after_interactions")
