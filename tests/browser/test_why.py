"""Real browser: "Why this prediction" opens with its defaults (the bundled Gemma 3 270M beside MiniLM: a lens grid
and attributions with real values), then a typed target and foil redraw it, with the URL carrying the question."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_clean, new_context, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def converted() -> None:
    """Convert the bundled GGUF before the server needs it (once per machine; the server shares the cache)."""
    from explorer.runtime import bundled

    bundled.ensure_converted()


def _figures_with(page, text: str, timeout: float = 300_000) -> None:
    page.wait_for_function("t => [...document.querySelectorAll(\"[data-testid='stPlotlyChart']\")]"
                           ".some(c => c.innerText.includes(t))", arg=text, timeout=timeout)


@pytest.fixture()
def why_page(browser, server_url):
    """The page opened with a longer first wait than ``open_page``'s: its first run loads Gemma and MiniLM and
    computes every cell (half a minute on an idle 2-core CPU)."""
    context = new_context(browser)
    page = context.new_page()
    page.goto(f"{server_url}/why?methods=grad-input,occlusion")
    yield page
    context.close()


def test_the_default_page_then_a_typed_contrast(why_page) -> None:
    page = why_page
    page.get_by_role("heading", name="Occlusion (leave one token out)").wait_for(timeout=600_000)
    wait_idle(page, timeout=600_000)
    _figures_with(page, "Logit lens of gemma3-270m")  # the grid of every layer's top-1 token
    _figures_with(page, "cosine similarity")  # MiniLM's strips: its attributions work without a head
    page.get_by_text("No lens: this model has no language-model head").first.wait_for()
    page.get_by_text("log p(' Paris') after the text =").first.wait_for()
    assert_clean(page, "why_default")

    foil = page.get_by_role("textbox", name="Foil (optional: target minus foil)")
    foil.fill("Rome")
    foil.press("Enter")
    wait_idle(page, timeout=600_000)
    page.get_by_text("minus the same for ' Rome' =").first.wait_for(timeout=300_000)
    assert "foil=Rome" in page.url and "methods=grad-input%2Cocclusion" in page.url
    assert_clean(page, "why_contrast")
