"""Real browser: sentence similarity page with typed, hostile sentences; tabs; nothing rendered as HTML."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser

LINES = "A man is eating food.\n<b>bold</b> <script>window.__pwned = 1</script>\n🙂 مرحبا بالعالم\nA man eats bread."


def test_typed_sentences_update_the_matrix_and_stay_text(open_page) -> None:
    page = open_page("similarity")
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.locator("[data-testid='stPlotlyChart']").first.wait_for(timeout=90_000)
    box = page.get_by_role("textbox", name="Sentences, one per line")
    box.fill(LINES)
    box.press("Control+Enter")
    wait_idle(page)
    page.get_by_text("4 sentences · 384-d").first.wait_for(timeout=60_000)
    labels = page.locator("[data-testid='stPlotlyChart']").first.inner_text()
    assert "<b>bold</b>" in labels  # plotly drew the tag as text
    assert page.evaluate("() => window.__pwned === undefined") and not dialogs

    page.get_by_role("tab", name="Late interaction (ColBERT)").click()
    page.get_by_text("Stand-in: no ColBERT checkpoint").first.wait_for()
    page.get_by_role("tab", name="Search").click()
    query = page.get_by_role("textbox", name="Query", exact=True)
    query.fill("Someone is eating")
    query.press("Enter")
    page.get_by_text("Query: Someone is eating").first.wait_for(timeout=60_000)  # the chart was redrawn
    wait_idle(page)
    assert_clean(page, "similarity")


def test_empty_list_shows_one_message(open_page) -> None:
    page = open_page("similarity")
    box = page.get_by_role("textbox", name="Sentences, one per line")
    box.fill("   \n\n")
    box.press("Control+Enter")
    wait_idle(page)
    page.get_by_text("No sentences given").first.wait_for()
    assert page.get_by_text("No sentences given").count() == 1
    assert_clean(page, "similarity-empty", errors_expected=True)


def test_the_sentence_bert_tab_recomputes_the_losses_for_typed_sentences(open_page) -> None:
    page = open_page("similarity")
    page.get_by_role("tab", name="Pooling & objectives (Sentence-BERT)").click()
    triplet = page.locator("[data-testid='stMetric']").filter(has_text="Triplet loss")
    triplet.first.wait_for(timeout=120_000)
    assert triplet.first.inner_text().strip().endswith("0.000")  # the defaults: the anchor is nearer the positive
    negative = page.get_by_role("textbox", name="Negative", exact=True)
    negative.fill("<i>Someone plays an instrument.</i>")  # as near the anchor as the positive: the triplet bites
    negative.press("Enter")
    wait_idle(page)
    page.wait_for_function("() => [...document.querySelectorAll(\"[data-testid='stMetric']\")].some("
                           "m => m.innerText.includes('Triplet loss') && !m.innerText.trim().endsWith('0.000'))",
                           timeout=60_000)
    assert page.locator("i").filter(has_text="Someone plays").count() == 0  # typed HTML stays text
    assert_clean(page, "similarity-sbert")
