"""Real browser: the Overview's lineage tree opens a variant in the Architecture explorer."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser


def test_clicking_a_lineage_node_opens_the_architecture_explorer(open_page) -> None:
    page = open_page("")
    charts = page.locator("[data-testid='stPlotlyChart']")
    charts.nth(1).wait_for(timeout=90_000)
    assert_clean(page, "home-lineage")
    # the node traces are the last three scatter traces (one per family); the first is the encoders
    node = charts.nth(1).locator(".scatterlayer .trace").nth(2).locator("path.point").first
    node.scroll_into_view_if_needed()
    node.click(force=True)
    page.wait_for_url("**/architecture?model=*", timeout=60_000)
    wait_idle(page)
    assert "model=" in page.url
    assert_clean(page, "home-lineage-opened")


def test_open_button_opens_the_picked_variant(open_page) -> None:
    page = open_page("")
    page.get_by_role("button", name="Open in the Architecture explorer").click()
    page.wait_for_url("**/architecture?model=bert-base", timeout=60_000)
    wait_idle(page)
    assert_clean(page, "home-open-button")


def test_the_declared_home_path_opens_the_overview(open_page) -> None:
    page = open_page("home")  # typed or shared as a link: it answered "Page not found" before
    page.get_by_role("heading", name="Transformer Explorer").first.wait_for(timeout=90_000)
    assert page.get_by_text("Page not found").count() == 0
    assert page.locator("[data-testid='stSidebarNav'] a").filter(has_text="Overview").count() == 1  # not twice
    assert_clean(page, "home-path")
