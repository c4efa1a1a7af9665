"""Real browser: Evaluate opens on the bundled task scored by the bundled Gemma (accuracy chart, the examples
table, slices), then the projector tab draws MiniLM's embeddings with WebGL and lists a typed sentence's
neighbours; the tab and the projection live in the URL. Ten copies of one sentence, each method in turn: a message
each time, and the server still answers (a t-SNE of them once killed it for every visitor)."""

from __future__ import annotations

import re
import urllib.request

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


def test_copies_of_one_sentence_get_a_message_from_every_method_and_the_server_lives(open_page, server_url) -> None:
    page = open_page("evaluate?eval_view=Embedding+projector&texts=lines&method=pca")
    box = page.get_by_role("textbox", name="Sentences")
    box.wait_for(timeout=300_000)
    box.fill("\n".join(["The cat sat on the mat."] * 10))
    box.press("Control+Enter")
    wait_idle(page, timeout=300_000)
    for method, said, box_id in (("PCA", "PCA draws them on one spot", "stAlertContentInfo"),
                                 ("t-SNE", "t-SNE lays out different points", "stAlertContentError"),
                                 ("UMAP", "UMAP lays out different points", "stAlertContentError")):
        page.get_by_text(method, exact=True).click()
        wait_idle(page, timeout=300_000)
        message = page.locator(f"[data-testid='{box_id}']").filter(has_text=said)
        message.first.wait_for(timeout=120_000)
        assert "All 10 texts have the same vector" in message.first.inner_text()
        assert page.get_by_text("Connection error").count() == 0
        with urllib.request.urlopen(f"{server_url}/_stcore/health", timeout=10) as answer:
            assert answer.status == 200  # the server lives
        assert_clean(page, f"evaluate_projector_copies_{method}", errors_expected=method != "PCA")
