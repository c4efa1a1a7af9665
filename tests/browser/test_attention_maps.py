"""Attention maps in a real browser: head view, layer/head sliders, model grid, a long text."""

from __future__ import annotations

import numpy as np
import pytest

from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser


def _heatmap_title(page) -> str:
    return page.locator("[data-testid='stPlotlyChart'] .gtitle").first.text_content() or ""  # SVG text


def _nudge_slider(page, label: str, presses: int) -> None:
    """Move a Streamlit slider with the keyboard (what a user does after clicking its thumb)."""
    thumb = page.locator(f"[data-testid='stSlider'] input[type='range'][aria-label='{label}']").first
    thumb.focus()
    for _ in range(presses):
        thumb.press("ArrowRight")
    wait_idle(page)


def _download_npy(page, label: str) -> np.ndarray:
    """Click a download button and load the file the browser received."""
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name=label).click()
    return np.load(info.value.path())


def test_attention_page_head_view_sliders_grid_and_long_text(open_page) -> None:
    page = open_page("attention")
    page.wait_for_selector("[data-testid='stPlotlyChart'] .gtitle", timeout=120_000)
    assert _heatmap_title(page) == "Self-attention: layer 0, head 0"
    assert page.locator("[data-testid='stPlotlyChart'] .heatmaplayer").count() >= 1  # a heatmap, not SVG lines

    _nudge_slider(page, "Layer", 3)
    _nudge_slider(page, "Head", 2)
    page.wait_for_function("() => document.querySelector(\"[data-testid='stPlotlyChart'] .gtitle\")"
                           ".textContent.includes('layer 3, head 2')", timeout=60_000)
    assert_clean(page, "attention_maps_head")
    n = _download_npy(page, "Download matrix (.npy)").shape[0]
    assert n == 16  # the default sentence's 16 tokens, exported as the exact matrix

    page.get_by_text("Model view (all layers x heads)").click()
    wait_idle(page)
    page.wait_for_function("() => [...document.querySelectorAll('.gtitle')]"
                           ".some(t => t.textContent.includes('Model view'))",
                           timeout=60_000)
    assert page.get_by_text("sent to the browser").count() == 1
    assert _download_npy(page, "Download all layers x heads (.npy)").shape == (6, 12, n, n)
    assert_clean(page, "attention_maps_grid")

    box = page.locator("[data-testid='stTextArea'] textarea").first
    box.fill("a long sentence that keeps going " * 200)  # ~1,200 tokens: more than the model takes
    box.press("Control+Enter")
    wait_idle(page)
    page.get_by_text("only the first 512").first.wait_for(timeout=120_000)
    page.get_by_text("blocks of up to 8 x 8 tokens").wait_for(timeout=120_000)  # grid rebuilt for 512
    wait_idle(page)
    assert page.get_by_text("Token range (zoom)").count() == 1  # long texts get the zoom slider
    assert_clean(page, "attention_maps_long")
