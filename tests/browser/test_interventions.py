"""Interventions in a real browser: the default pair on the bundled Gemma draws a real patching grid, an ablation
table and a steered generation; picking the per-head site redraws the grid with a column per head."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_clean, new_context, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def converted() -> None:
    """The bundled GGUF converted before the server needs it (shared models cache)."""
    from explorer.runtime import bundled

    bundled.ensure_converted()


GRID_TITLE = "() => [...document.querySelectorAll('.gtitle')].some(t => t.textContent.includes({text!r}))"


@pytest.fixture()
def page(browser, server_url):
    """A fresh page of the Interventions (not ``open_page``: its first run, on a CPU, takes longer than that
    fixture waits, and the waits below say what they wait for)."""
    context = new_context(browser)
    yield context.new_page()
    context.close()


def test_default_grid_ablation_steering_and_the_head_site(page, server_url) -> None:
    page.goto(f"{server_url}/interventions")
    page.wait_for_function(GRID_TITLE.format(text="Patching the residual stream"), timeout=600_000)
    wait_idle(page, timeout=600_000)
    heat = page.locator("[data-testid='stPlotlyChart']").first
    assert heat.locator(".heatmaplayer").count() >= 1 and "Eiffel" in heat.inner_text()
    assert_clean(page, "interventions_default")

    page.get_by_role("tab", name="Ablation").click()
    page.get_by_text("KL(before ‖ after)").first.wait_for(timeout=60_000)
    assert page.locator("[data-testid='stDataFrame']").count() >= 1  # the before/after table
    page.get_by_role("tab", name="Steering").click()
    texts = page.locator("[data-testid='stText']").all_inner_texts()
    assert len([t for t in texts if t.startswith("I think that you are")]) == 2

    page.get_by_role("tab", name="Patching").click()
    page.get_by_text("each head").first.click()
    wait_idle(page, timeout=600_000)
    page.wait_for_function(GRID_TITLE.format(text="attention head outputs"), timeout=600_000)
    assert "head 3" in page.locator("[data-testid='stPlotlyChart']").first.inner_text()
    assert "site=heads" in page.url
    assert_clean(page, "interventions_heads")
