"""Real browser: spans page answered by the bundled decoder, then a tiny local T5 and a typed hostile prompt."""

from __future__ import annotations

import pytest

from explorer.runtime.loading import best_device
from tests.browser.conftest import assert_clean, wait_idle
from tests.tiny_models import save_tiny

pytestmark = pytest.mark.browser


def test_typed_prompt_with_a_local_t5(open_page, tmp_path) -> None:
    t5 = save_tiny("t5", tmp_path / "t5")
    page = open_page("spans")
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    # out of the box: the bundled decoder fills the default prompt and answers the default question
    page.get_by_text(f"decoder (causal LM) · {best_device()} ·").first.wait_for(timeout=240_000)
    page.get_by_text("Blank 1, by the likelihood of the whole text").first.wait_for()
    assert_clean(page, "spans_decoder_default")

    folder = page.get_by_role("textbox", name="Or a directory saved with save_pretrained (decoder, T5 or BART)")
    folder.fill(str(t5))
    folder.press("Enter")
    wait_idle(page)
    prompt = page.get_by_role("textbox", name="Prompt", exact=True)
    prompt.fill("<b>tag</b> <img src=x onerror=alert(1)> ___ ends here.")
    prompt.press("Control+Enter")
    wait_idle(page)
    page.get_by_text(f"T5 · {best_device()} ·").first.wait_for(timeout=240_000)
    md = page.locator("[data-testid='stMarkdownContainer']", has_text="ends here")
    assert "<b>tag</b>" in md.first.inner_text()  # shown as typed, not rendered
    assert md.first.locator("b, img").count() == 0 and not dialogs
    assert_clean(page, "spans")
