"""Real browser: the Replaced-token detection page (ELECTRA), a typed sentence with HTML, the seed in the URL,
an empty sentence, and the way there from an old Fill-mask link."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser
UNTRAINED = "Untrained weights: predictions are noise"


def _type(page, label: str, text: str) -> None:
    box = page.get_by_role("textbox", name=label)
    box.fill(text)
    box.press("Enter")
    wait_idle(page, timeout=180_000)


def test_typed_sentence_gives_the_strip_and_stays_text(open_page) -> None:
    page = open_page("electra?seed=5")  # electra-small, random weights where none are on disk
    page.get_by_text("tokens replaced · accuracy at 0.5").first.wait_for(timeout=180_000)
    strip = page.locator("[data-testid='stPlotlyChart'] .cartesianlayer .subplot")  # drawn, not an empty frame
    strip.first.wait_for(timeout=60_000)
    assert page.locator("[data-testid='stPlotlyChart'] .hm, [data-testid='stPlotlyChart'] .heatmaplayer image").count()
    assert page.get_by_role("spinbutton", name="Seed").input_value() == "5"
    assert_clean(page, "electra_default")

    _type(page, "Sentence", "<b id='inj'>bold</b><script>window.pwned=1</script> The chef [MASK] the meal.")
    page.get_by_text(re.compile(r"of (?!10 )\d+ tokens replaced")).first.wait_for(timeout=180_000)  # not the 10 before
    wait_idle(page, timeout=180_000)  # the strip and the table come after the caption
    assert page.locator("#inj").count() == 0 and page.evaluate("() => window.pwned === undefined")
    assert re.search(r"[?&]pair=electra-small", page.url) and re.search(r"[?&]seed=5", page.url)
    assert_clean(page, "electra_typed")

    _type(page, "Sentence", "   ")
    page.get_by_text("empty").first.wait_for(timeout=60_000)
    assert_clean(page, "electra_empty", errors_expected=True)


def test_an_old_fill_mask_link_leads_to_the_page(open_page) -> None:
    page = open_page("fill-mask?models=electra-small-discriminator")
    link = page.get_by_role("link", name="Replaced-token detection with electra-small")
    link.wait_for(timeout=180_000)
    link.click()
    page.wait_for_url(re.compile(r".*/electra\?.*pair=electra-small.*"), timeout=60_000)
    wait_idle(page, timeout=180_000)
    page.get_by_role("heading", name="Replaced-token detection (ELECTRA)").wait_for(timeout=60_000)
    page.get_by_text(UNTRAINED).first.wait_for(timeout=180_000)
    assert_clean(page, "electra_from_fill_mask")
