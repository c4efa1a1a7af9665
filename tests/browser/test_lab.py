"""Real browser: the Pretraining lab trains three objectives side by side on an uploaded text, the progress bars
and the loss curves update live (fragment reruns, not page reruns), and no error box appears."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import SHOTS, assert_clean, streamlit_server, wait_idle

pytestmark = pytest.mark.browser
OBJECTIVES = ("mlm", "bert", "albert")  # trainable since the lab's core landed
# ~3,600 words: the upload keeps the run small (cutting the bundled corpus into windows takes longer than training)
TEXT = "\n\n".join(f"The function number {i} returns a list of values from the module, and the loop reads it "
                   f"again in order {i % 7}." for i in range(200)).encode()
# The page redraws its runs once a second; an EXPLORER_LAB_QUICK step takes ~0.05 s here and less on a faster
# machine, so a run could end between two redraws. The server paces each step to at least PACE_S: a run of STEPS
# steps trains for 3 s or more on any machine, through several redraws.
STEPS, PACE_S = 20, 0.15
POINTS = "() => [...document.querySelectorAll('.js-plotly-plot')].map(d => (d.data || []).map(t => (t.x || []).length))"


@pytest.fixture(scope="module")
def server_url():
    """A server of this module's own that trains the tests' small steps and probes (``EXPLORER_LAB_QUICK=1``, as the
    lab's AppTests do): the same page and code path, where the default downstream probe was 80 of the test's 95 s
    (py-spy on the app server). What is checked here is the live page, not the probe's size."""
    with streamlit_server({"explorer.training.trainer:_step": PACE_S}, EXPLORER_LAB_QUICK="1") as url:
        yield url


def _loss_points(page) -> list[int]:
    """Points per run on the first figure (training loss by step)."""
    figs = page.evaluate(POINTS)
    return figs[0] if figs else []


def test_three_objectives_train_side_by_side_with_live_curves(open_page) -> None:
    page = open_page(f"lab?objectives={','.join(OBJECTIVES)}&steps={STEPS}&seed=1")
    page.get_by_role("heading", name="Pretraining lab").wait_for(timeout=90_000)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        {"name": "notes.txt", "mimeType": "text/plain", "buffer": TEXT})
    page.get_by_text(re.compile(r"Training text: notes.*words")).wait_for(timeout=60_000)
    wait_idle(page)
    assert_clean(page, "lab_ready")

    page.get_by_role("button", name="Train", exact=True).click()
    for name in OBJECTIVES:  # one progress bar per run, drawn at once (the third waits for a slot)
        page.get_by_text(re.compile(rf"#\d {name} \(tiny, seed 1\)")).first.wait_for(timeout=60_000)
    page.get_by_text(re.compile(rf"step \d+ of {STEPS} · loss")).first.wait_for(timeout=240_000)
    page.wait_for_function(f"() => ({POINTS})()[0]?.some(n => n > 0)", timeout=120_000)
    before = sum(_loss_points(page))
    page.wait_for_function(f"() => ({POINTS})()[0].reduce((a, b) => a + b, 0) > {before}", timeout=120_000)
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "lab_live.png"), full_page=True)  # mid-run: bars part-way, curves drawn
    assert re.search(r"[?&]objectives=mlm(%2C|,)bert(%2C|,)albert", page.url)

    for name in OBJECTIVES:
        page.get_by_text(re.compile(rf"#\d {name} \(tiny, seed 1\): done")).wait_for(timeout=300_000)
    wait_idle(page)
    assert _loss_points(page) == [STEPS] * 3  # every step of every run on the curve
    table = page.locator("[data-testid='stDataFrame']")
    assert table.count() == 1
    assert_clean(page, "lab_done")
