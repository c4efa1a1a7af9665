"""Real browser: the Compression lab with MiniLM, int8 and prune-50 (picked through the URL, as a shared
link does), Run pressed: the trade-off chart is drawn, the answers table is there, no error box."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser


def test_minilm_int8_prune50_draws_the_tradeoff_chart(open_page) -> None:
    page = open_page("compression?model=sentence-bert&methods=int8,prune-50")
    page.get_by_text("press Run").first.wait_for(timeout=120_000)
    chips = page.locator("[data-testid='stMultiSelect']").first.inner_text()
    assert "int8" in chips and "prune-50" in chips and "bf16" not in chips
    page.get_by_role("button", name="Run", exact=True).click()
    wait_idle(page, timeout=300_000)
    chart = page.locator("[data-testid='stPlotlyChart'] .cartesianlayer .subplot")
    chart.first.wait_for(timeout=300_000)
    assert page.locator("[data-testid='stPlotlyChart'] .scatterlayer .trace").count() >= 2  # points + frontier
    page.get_by_text("Answers on one prompt").first.wait_for(timeout=60_000)
    assert re.search(r"[?&]methods=int8(%2C|,)prune-50", page.url)
    assert_clean(page, "compression_minilm")
