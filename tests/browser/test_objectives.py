"""Real browser: the objectives page draws chips and figures, reacts to text and strategy changes."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser


def _ready(page) -> None:
    """The first run can start late on a busy machine: wait for the statistics figures."""
    page.wait_for_selector("text=Over many draws", timeout=90_000)
    page.locator("[data-testid='stPlotlyChart'] .main-svg").first.wait_for(timeout=90_000)
    wait_idle(page)


def test_objectives_page_interactions(open_page) -> None:
    page = open_page("objectives?strategy=t5")
    _ready(page)
    assert_clean(page, "objectives_t5")
    assert page.get_by_text("<extra_id_0>", exact=True).first.is_visible()  # a sentinel chip
    assert page.locator("[data-testid='stPlotlyChart'] .main-svg").count() >= 2

    box = page.get_by_label("Text", exact=True)
    box.fill("<script>alert(1)</script> The <b>cat</b> sat on the mat. It was happy!")
    box.press("Control+Enter")
    wait_idle(page)
    _ready(page)
    # the rerun may start after wait_idle returns on a busy machine: wait for what it draws
    page.get_by_text("script", exact=False).first.wait_for(timeout=60_000)
    assert page.locator("script:text('alert(1)')").count() == 0  # shown as text, never injected

    page.get_by_label("Family", exact=True).click()
    page.get_by_role("option", name="replaced-token detection").click()
    wait_idle(page)
    _ready(page)
    assert "strategy=electra" in page.url
    assert page.get_by_text("sampled = original").count() + page.get_by_text("replaced", exact=True).count() >= 1

    box.fill("   ")
    box.press("Control+Enter")
    wait_idle(page)
    page.locator("[data-testid='stAlertContentError']").first.wait_for(timeout=60_000)
    assert_clean(page, "objectives_after_interactions", errors_expected=True)


def test_the_c4_tab_cleans_a_typed_page(open_page) -> None:
    page = open_page("objectives")
    page.get_by_role("tab", name="Data: C4's cleaning").click()
    page.get_by_text("documents kept").first.wait_for(timeout=120_000)  # the bundled corpus, cleaned
    box = page.get_by_role("textbox", name="A page of web text (or several, separated by blank lines)")
    box.fill("<b id='c4inj'>Menu</b>\n" + " ".join(f"Sentence number {i} ends here." for i in range(6)))
    box.press("Control+Enter")
    wait_idle(page)
    page.get_by_text("1 of 1 pages kept").first.wait_for(timeout=60_000)
    assert page.locator("#c4inj").count() == 0
    assert_clean(page, "objectives-c4")
