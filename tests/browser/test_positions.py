"""Real browser: Positions and the KV cache opens on the bundled Gemma 3 270M beside MiniLM with their real weights
(Gemma's rotary module checked against the formula, MiniLM's learned table), charts the cache of several variants,
and the live run generates with and without the cache on the real Gemma: the same text twice."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser
WAIT_MS = 300_000


@pytest.fixture(scope="module", autouse=True)
def converted() -> None:
    """Convert the bundled GGUF before the server needs it (once per machine; the server shares the cache)."""
    from explorer.runtime import bundled

    bundled.ensure_converted()


def test_gemma_beside_minilm_and_the_live_cache(open_page) -> None:
    page = open_page("positions?new=12")
    page.get_by_role("heading", name="The key/value cache").wait_for(timeout=WAIT_MS)
    wait_idle(page, timeout=WAIT_MS)
    page.get_by_text("the model's own rotary module").first.wait_for(timeout=WAIT_MS)
    page.get_by_text("the model's own position table").first.wait_for(timeout=WAIT_MS)
    assert_clean(page, "positions_default")

    page.get_by_role("button", name="Generate with and without the cache").click()
    wait_idle(page, timeout=WAIT_MS)
    page.get_by_text("measured").first.wait_for(timeout=WAIT_MS)
    cached = page.get_by_label("Text with the cache").input_value()
    uncached = page.get_by_label("Text without it").input_value()
    assert cached and cached == uncached
    assert_clean(page, "positions_live")
