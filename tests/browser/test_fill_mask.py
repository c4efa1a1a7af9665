"""Fill-mask in a real browser: a typed prompt with HTML, two masks, and an empty prompt."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser


def _type_prompt(page, text: str) -> None:
    box = page.locator("[data-testid='stTextArea'] textarea").first
    box.fill(text)
    box.press("Control+Enter")
    wait_idle(page)


def test_fill_mask_typed_prompt_html_stays_text(open_page) -> None:
    page = open_page("fill-mask?models=electra-small-generator")  # smallest catalog MLM, random weights
    page.get_by_text("Untrained weights: predictions are noise").first.wait_for(timeout=180_000)
    page.locator("[data-testid='stPlotlyChart']").first.wait_for(timeout=60_000)
    assert_clean(page, "fill_mask_default")

    _type_prompt(page, "<b id='inj'>bold</b><script>window.pwned=1</script> The [MASK] sat on the ___.")
    page.get_by_text("Mask 2").first.wait_for(timeout=120_000)
    assert page.locator("#inj").count() == 0 and page.evaluate("() => window.pwned === undefined")
    page.get_by_text("Chart for mask").first.wait_for(timeout=60_000)  # drawn after the columns
    assert page.get_by_text("Chart for mask").count() == 1
    assert_clean(page, "fill_mask_two_masks")

    _type_prompt(page, "   ")
    page.get_by_text("The prompt is empty").first.wait_for(timeout=60_000)
    assert_clean(page, "fill_mask_empty", errors_expected=True)


def test_fill_mask_several_prompts_one_row_each(open_page) -> None:
    page = open_page("fill-mask?models=electra-small-generator")
    page.get_by_text("Untrained weights: predictions are noise").first.wait_for(timeout=180_000)
    _type_prompt(page, "The [MASK] sat on the ___.\n\nNo blank on this line.\n<i id='inj2'>Hi</i> [MASK].")
    page.get_by_text("Download CSV (every prompt, top-k)").first.wait_for(timeout=120_000)
    assert page.get_by_text("Line 3: There is no mask").count() == 1  # a per-line message, not a page error
    assert page.get_by_text("Chart for mask").count() == 0 and page.locator("#inj2").count() == 0
    assert_clean(page, "fill_mask_several_prompts")
