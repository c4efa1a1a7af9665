"""Real browser, a fresh server: two first visitors open Why this prediction and Interventions at the same moment,
and both pages draw (their imports once ran in two threads at once: "Something went wrong", "cannot import name
'BertTokenizer'"; app/preload.py). Each visitor has a session of its own; the pages are read once their titles
and first controls are drawn, which is after every import of the page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.browser.conftest import SHOTS, new_context, streamlit_server

pytestmark = pytest.mark.browser
PAGES = {"why": "Why this prediction", "interventions": "Interventions"}
WAIT_MS = 240_000


@pytest.fixture(scope="module")
def fresh_url() -> Iterator[str]:
    with streamlit_server() as url:  # its own: the session's server has imported everything already
        yield url


def test_two_first_visitors_at_once_both_see_their_page(browser, fresh_url) -> None:
    visitors = [new_context(browser) for _ in PAGES]
    try:
        pages = [ctx.new_page() for ctx in visitors]
        for page, path in zip(pages, PAGES, strict=True):  # both requests sent before either script has run
            page.goto(f"{fresh_url}/{path}", wait_until="commit")
        for page, title in zip(pages, PAGES.values(), strict=True):
            page.get_by_role("heading", name=title).wait_for(timeout=WAIT_MS)
            page.locator("[data-testid='stMain'] :is(textarea, input[type='text'])").first.wait_for(timeout=WAIT_MS)
        SHOTS.mkdir(exist_ok=True)
        for page, path in zip(pages, PAGES, strict=True):
            page.screenshot(path=str(SHOTS / f"first_visitor_{path}.png"))
            main = page.locator("[data-testid='stMain']").inner_text()
            assert "Something went wrong" not in main and "cannot import" not in main, main[:1000]
            assert page.locator("[data-testid='stException']").count() == 0
    finally:
        for ctx in visitors:
            ctx.close()
