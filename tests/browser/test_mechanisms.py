"""Real browser: the mechanisms page draws each tab, switches tabs into the URL, and refuses an empty sentence."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_clean, wait_idle, wait_url

pytestmark = pytest.mark.browser


def _charts(page, n: int) -> None:
    """The first run builds models on a busy machine: wait for ``n`` drawn figures."""
    page.wait_for_function(
        f"() => document.querySelectorAll(\"[data-testid='stPlotlyChart'] .main-svg\").length >= {n}",
        timeout=120_000)
    wait_idle(page)


def test_mechanisms_tabs_and_bad_input(open_page) -> None:
    page = open_page("mechanisms?head=2")
    _charts(page, 2)
    assert page.get_by_text("content→position").first.is_visible()
    assert page.get_by_text("enhanced mask decoder", exact=False).first.is_visible()
    assert_clean(page, "mechanisms_deberta")

    page.get_by_role("tab", name="Text-to-text").click()
    wait_idle(page)
    _charts(page, 3)
    wait_url(page, "tab=Text-to-text")
    box = page.get_by_role("textbox", name="Text after the code")
    box.fill("<img src=x onerror=alert(1)> 🙂 مرحبا")
    box.press("Enter")
    wait_idle(page)
    _charts(page, 3)
    assert page.locator("[data-testid='stMain'] img[src='x']").count() == 0
    assert_clean(page, "mechanisms_text")

    page.get_by_role("tab", name="Distillation").click()
    wait_idle(page)
    _charts(page, 4)
    assert page.get_by_text("TinyBERT layer m learns from BERT-base layer g(m)", exact=False).count() >= 1
    assert_clean(page, "mechanisms_distillation")

    sentence = page.get_by_role("textbox", name="Sentence (15% of its word pieces are masked)")
    sentence.fill("")
    sentence.press("Enter")
    wait_idle(page)
    errors = page.locator("[data-testid='stAlertContentError']")
    errors.first.wait_for(timeout=60_000)
    assert errors.count() == 1 and "empty" in errors.first.inner_text()
    assert_clean(page, "mechanisms_empty", errors_expected=True)


def test_the_sift_tab_recomputes_for_another_model(open_page) -> None:
    page = open_page("mechanisms?tab=SiFT+%28DeBERTa%29")
    sift = page.locator("[data-testid='stMetric']").filter(has_text="SiFT: 1 - cosine")
    sift.first.wait_for(timeout=120_000)
    page.get_by_label("Model", exact=True).click()
    page.get_by_role("option", name="Gemma 3 270M (bundled decoder: scaled embeddings of one size)").click()
    wait_idle(page)
    page.locator("[data-testid='stMetric']").filter(has_text="SiFT: KL").first.wait_for(timeout=180_000)
    page.get_by_text("Next token, clean").first.wait_for(timeout=60_000)
    assert_clean(page, "mechanisms_sift")
