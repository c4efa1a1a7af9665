"""Tokenizers page in a real browser: type a text, the chips follow; typed HTML stays text."""

from __future__ import annotations

import pytest

from explorer import tokenization as tk
from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser

BERT = "[aria-label='BERT uncased (WordPiece) tokens']"


def _type(page, text: str) -> None:
    """Replace the text area's content and commit it (Ctrl+Enter), then wait for the rerun."""
    box = page.get_by_label("Text", exact=True)
    box.fill(text)
    box.press("Control+Enter")
    wait_idle(page)


def _chip_pieces(page, selector: str) -> list[str]:
    return page.locator(f"{selector} bdi").all_inner_texts()


def _wait_chips(page, selector: str, n: int) -> None:
    page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel + ' bdi').length === n", arg=[selector, n])


def test_typing_updates_the_chips_and_html_stays_text(open_page) -> None:
    page = open_page("tokenizers")
    default = tk.tokenize("bert-base-uncased", tk.PRESETS["Rare words & misspellings"])
    _wait_chips(page, BERT, default.count)
    assert _chip_pieces(page, BERT) == list(default.pieces)

    _type(page, "My gooooood cat")
    expected = tk.tokenize("bert-base-uncased", "My gooooood cat")
    _wait_chips(page, BERT, expected.count)
    assert _chip_pieces(page, BERT) == list(expected.pieces)  # [CLS] my goo ##oo ##ood cat [SEP]
    assert "##oo" in _chip_pieces(page, BERT)
    # The chips' style sheet survives Streamlit's HTML sanitizer: special tokens are purple.
    cls_border = page.locator(f"{BERT} .tkx-sp").first.evaluate("e => getComputedStyle(e).borderTopColor")
    assert cls_border == "rgb(126, 87, 194)"

    html_text = '<img src=x onerror="document.title=1"> <b>bold</b>'
    _type(page, html_text)
    pieces = list(tk.tokenize("bert-base-uncased", html_text).pieces)
    _wait_chips(page, BERT, len(pieces))
    assert _chip_pieces(page, BERT) == pieces  # "<", "im", "##g", ...: shown as text pieces
    assert page.locator("[data-testid='stMain'] img[src='x']").count() == 0  # not rendered as HTML
    assert page.locator(f"{BERT} b").count() == 0
    assert page.title() != "1"
    assert_clean(page, "tokenizers")

    # The other views render too: word-split heatmap (labels escaped) and the export table.
    page.get_by_role("tab", name="Word by word").click()
    page.locator("[data-testid='stPlotlyChart']:visible").first.wait_for()
    assert "&lt;" not in page.locator("[data-testid='stPlotlyChart']:visible").first.inner_text()
    assert_clean(page, "tokenizers_words")
    page.get_by_role("tab", name="Table & export").click()
    page.get_by_text("Download all tokens (CSV)").wait_for()
    assert_clean(page, "tokenizers_table")
