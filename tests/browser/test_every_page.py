"""Real browser: every page in the navigation opens without an exception box, and the sidebar
navigation itself works (click through from the overview)."""

from __future__ import annotations

import pytest

from app.navigation import SECTIONS
from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser
PAGES = [(title, url) for pages in SECTIONS.values() for _, title, _, url in pages]


@pytest.mark.parametrize("title,url", PAGES, ids=[u for _, u in PAGES])
def test_page_opens_cleanly(open_page, title: str, url: str) -> None:
    page = open_page(url)
    page.get_by_role("heading").first.wait_for(timeout=90_000)
    assert_clean(page, f"page-{url}")


def test_sidebar_navigation(open_page) -> None:
    page = open_page("")
    page.get_by_role("link", name="Compare variants").click()
    wait_idle(page)
    page.wait_for_url("**/compare**")
    page.get_by_role("heading", name="Compare variants").wait_for()
    assert_clean(page, "navigate-compare")
