"""Real browser: Evaluate opens on the bundled task scored by the bundled Gemma (accuracy chart, the examples
table, slices), then the projector tab draws MiniLM's embeddings with WebGL and lists a typed sentence's
neighbours; the tab and the projection live in the URL."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser


def test_evaluate_scores_the_bundled_task_and_projects_embeddings(open_page) -> None:
    page = open_page("evaluate?task=cloze")
    page.get_by_role("heading", name="Evaluate").wait_for(timeout=120_000)
    wait_idle(page, timeout=600_000)
    page.locator("[data-testid='stPlotlyChart'] .cartesianlayer .subplot").first.wait_for(timeout=600_000)
    page.get_by_text("Example by example (disagreements first)").first.wait_for(timeout=60_000)
    assert page.get_by_text("22 examples").count() >= 1  # the bundled cloze task, as the link asked
    assert_clean(page, "evaluate_task")

    page.get_by_role("tab", name="Embedding projector").click()
    wait_idle(page, timeout=300_000)
    page.wait_for_url(re.compile(r"eval_view=Embedding"), timeout=60_000)
    page.locator("[data-testid='stPlotlyChart'] canvas").first.wait_for(timeout=300_000)  # scattergl: WebGL
    box = page.get_by_label("Nearest neighbours of")
    box.fill("How many legs does an insect have?")
    box.press("Enter")
    wait_idle(page, timeout=120_000)
    # the neighbours' table in the open tab (a data grid's cells are hidden accessibility cells, so: attached)
    near = page.locator("[role='tabpanel']:visible [data-testid='stDataFrame']").filter(has_text="spider")
    near.first.wait_for(state="attached", timeout=60_000)
    page.get_by_text("UMAP", exact=True).click()
    wait_idle(page, timeout=300_000)
    page.wait_for_url(re.compile(r"method=umap"), timeout=60_000)
    page.locator("[data-testid='stPlotlyChart'] canvas").first.wait_for(timeout=300_000)
    assert_clean(page, "evaluate_projector")
