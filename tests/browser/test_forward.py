"""Real browser: the Forward pass opens on the bundled Gemma 3 270M beside MiniLM with their real weights, the walk
goes step by step with the buttons (the URL follows), a layer is jumped to, and every step checked shows its error
against the model's own value."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import assert_clean, new_context, wait_idle, wait_url

pytestmark = pytest.mark.browser
WAIT_MS = 300_000


@pytest.fixture(scope="module", autouse=True)
def converted() -> None:
    """Convert the bundled GGUF before the server needs it (once per machine; the server shares the cache)."""
    from explorer.runtime import bundled

    bundled.ensure_converted()


@pytest.fixture()
def forward_page(browser, server_url):
    context = new_context(browser)
    page = context.new_page()
    page.goto(f"{server_url}/forward")
    yield page
    context.close()


def _lead(page) -> str:
    """The lead model's current step, as its column titles it."""
    return page.locator("[data-testid='stMain'] strong").filter(has_text=re.compile(r"^\d+\. ")).first.inner_text()


def test_walking_gemma_beside_minilm_step_by_step(forward_page) -> None:
    page = forward_page
    page.get_by_text("How they differ").wait_for(timeout=WAIT_MS)
    wait_idle(page, timeout=WAIT_MS)
    assert _lead(page).startswith("1. decoder embeddings")
    page.get_by_text("sandwich").first.wait_for()  # Gemma's norms beside BERT's post-LN, from the cards
    assert_clean(page, "forward_default")

    for _ in range(3):
        page.get_by_role("button", name="Next ▶").click()
        wait_idle(page, timeout=WAIT_MS)
    wait_url(page, "step=3")
    assert _lead(page).startswith("4. decoder layer 0")
    page.get_by_text(re.compile(r"max \|recomputed − model's own\| = 0")).first.wait_for()  # the real weights' value

    page.get_by_role("button", name="◀ Previous").click()
    wait_idle(page, timeout=WAIT_MS)
    wait_url(page, "step=2")
    assert_clean(page, "forward_walked")
