"""Real browser: the Features page opens on the bundled Gemma 3 270M with its shipped sparse autoencoder, shows a
feature's dashboard from the held-out text, and a clamp's before and after; another feature follows the URL."""

from __future__ import annotations

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
def features_page(browser, server_url):
    context = new_context(browser)
    page = context.new_page()
    page.goto(f"{server_url}/features")
    yield page
    context.close()


def test_the_shipped_sae_shows_a_dashboard_and_a_clamp(features_page) -> None:
    page = features_page
    page.get_by_text("held-out tokens; largest activation").first.wait_for(timeout=WAIT_MS)
    wait_idle(page, timeout=WAIT_MS)
    assert page.get_by_text("256 features on the residual stream of layer 9").count() >= 1  # the shipped one
    assert_clean(page, "features_default")
    page.get_by_role("tab", name="Clamp or ablate").click()
    page.get_by_text("the feature's mean activation").first.wait_for(timeout=WAIT_MS)
    box = page.get_by_label("Feature (0 to 255)")
    box.fill("5")
    box.press("Enter")
    wait_idle(page, timeout=WAIT_MS)
    wait_url(page, "feature=5")
    page.get_by_role("tab", name="Dashboard").click()
    page.get_by_text("Feature 5", exact=True).first.wait_for(timeout=WAIT_MS)
    assert_clean(page, "features_feature_5")
