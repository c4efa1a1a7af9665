"""Real browser: the Results page from a shared link, and the speed button on two small models."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_clean, wait_idle, wait_url

pytestmark = pytest.mark.browser


def test_results_from_a_shared_link_shows_not_reported_and_the_frontier(open_page) -> None:
    page = open_page("results?benchmark=long-document-qa-dev&metric=nq_la&x=flops")
    page.locator("[data-testid='stPlotlyChart']").first.wait_for(timeout=90_000)
    page.get_by_text("Not on the chart (not reported)").first.wait_for()
    assert "benchmark=long-document-qa-dev" in page.url and "x=flops" in page.url
    assert_clean(page, "results-shared-link")


def test_speed_button_measures_two_small_models(open_page) -> None:
    page = open_page("results?speed=tinybert,electra-small-discriminator")
    page.get_by_role("button", name="Measure on this machine").click()
    page.get_by_text("ratio (first / second)").first.wait_for(timeout=120_000)
    wait_idle(page)
    assert page.get_by_text("ms / example").count() >= 2
    assert_clean(page, "results-speed")


def test_glue_across_papers_opens_first_and_switches_to_dev(open_page) -> None:
    page = open_page("results")
    page.get_by_text("What is not comparable").first.wait_for(timeout=90_000)
    page.locator("[data-testid='stPlotlyChart']").first.wait_for(timeout=90_000)
    page.get_by_text("dev", exact=True).first.click()
    wait_idle(page)
    wait_url(page, "view=glue")
    page.get_by_text("Dev and test are different sets").first.wait_for(timeout=60_000)
    assert_clean(page, "results-glue-dev")


def test_budgets_view_draws_the_scaling_laws(open_page) -> None:
    page = open_page("results?view=budgets")
    page.get_by_text("Scaling laws, with the catalog on them").first.wait_for(timeout=90_000)
    page.locator("[data-testid='stPlotlyChart']").nth(1).wait_for(timeout=90_000)
    assert_clean(page, "results-budgets")
