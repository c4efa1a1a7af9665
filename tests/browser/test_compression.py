"""Real browser: the Compression lab with MiniLM, int8 and prune-50 (picked through the URL, as a shared
link does), Run pressed: the trade-off chart is drawn, the answers table is there, no error box; a lab model
with exits measured both ways (early exit, then compressed copies with mheads-50 typed in)."""

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


def test_a_lab_model_with_exits_measures_early_exit(open_page, lab_exits) -> None:
    """The models folder typed on Models carries over (same session) to Compression, which offers the lab model
    with FastBERT exits, its exit speeds and a passage box; Run draws the chart, the notes and the answers."""
    page = open_page("models")
    box = page.get_by_role("textbox", name="Models directory")
    box.fill(str(lab_exits))
    box.press("Enter")
    wait_idle(page)
    more = page.get_by_text(re.compile(r"View \d+ more"))
    if more.count():
        more.first.click()
    page.get_by_role("link", name="Compression lab").click()  # in-app navigation keeps the session's folder
    page.get_by_role("heading", name="Compression lab").wait_for(timeout=60_000)
    wait_idle(page)
    page.get_by_label("Model", exact=True).click()
    page.get_by_role("option", name=re.compile("FastBERT exits")).click()
    page.get_by_text("Passage to classify").first.wait_for(timeout=60_000)
    chips = page.locator("[data-testid='stMultiSelect']").first.inner_text()
    assert "exit-0.8" in chips and "int8" not in chips
    page.get_by_role("button", name="Run", exact=True).click()
    wait_idle(page, timeout=300_000)
    page.locator("[data-testid='stPlotlyChart'] .cartesianlayer .subplot").first.wait_for(timeout=300_000)
    page.get_by_text("Answers on one prompt").first.wait_for(timeout=60_000)  # (the table itself is a canvas)
    assert page.get_by_text("Early exit saves compute, not bytes").count() == 1
    assert "model=lab%2Fmlm-tiny-20steps-seed0" in page.url or "model=lab/mlm-tiny-20steps-seed0" in page.url
    assert_clean(page, "compression_early_exit")
    # The same lab model measured the other way: compressed copies, with Michel et al.'s heads typed in.
    page.get_by_text("Compressed copies", exact=True).click()
    wait_idle(page)
    page.get_by_text("Prompt for the side-by-side answers").first.wait_for(timeout=60_000)
    typed = page.locator("[data-testid='stMultiSelect'] input").first
    typed.click()
    typed.fill("mheads-50")
    typed.press("Enter")
    page.keyboard.press("Escape")
    wait_idle(page)
    chips = page.locator("[data-testid='stMultiSelect']").first.inner_text()
    assert "mheads-50" in chips and "exit-0.8" not in chips, chips
    page.get_by_role("button", name="Run", exact=True).click()
    wait_idle(page, timeout=300_000)
    page.locator("[data-testid='stPlotlyChart'] .cartesianlayer .subplot").first.wait_for(timeout=300_000)
    assert page.get_by_text("write zeros into dense matrices").count() == 1  # mheads-N's zeros: said
    assert "mode=Compressed" in page.url
    assert_clean(page, "compression_lab_mheads")
