"""Real browser: type a prompt on the decoding lab and see the real Gemma 3 270M's tokens."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import SHOTS, assert_clean, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def converted() -> None:
    """Convert the bundled GGUF before the server needs it (a few minutes once per machine; the
    server shares the models cache), so page loads stay within the browser timeouts."""
    from explorer.runtime import bundled

    bundled.ensure_converted()


def test_typed_prompt_gives_real_tokens_and_steps(open_page) -> None:
    page = open_page("decoding?strategies=greedy,beam&n=4")
    page.get_by_role("heading", name="Generate one token at a time").wait_for(timeout=600_000)
    box = page.get_by_role("textbox", name="Prompt")
    box.fill("Paris is the capital of")
    box.press("Control+Enter")
    wait_idle(page, timeout=300_000)
    page.get_by_text("vocabulary 262,144").first.wait_for(timeout=120_000)
    # the next-token chart of the typed prompt names France (drawn once the run ends: on a busy machine later
    # than the caption above, so wait for it rather than read it once)
    page.wait_for_function("() => [...document.querySelectorAll(\"[data-testid='stPlotlyChart']\")]"
                           ".some(c => c.innerText.includes('France'))", timeout=180_000)
    page.get_by_role("button", name="Run to 4").click()
    wait_idle(page, timeout=300_000)
    page.get_by_text("4 token(s) per strategy").first.wait_for(timeout=300_000)
    shown = page.locator("[data-testid='stText']").all_inner_texts()
    assert any(t.strip().startswith("greedy: Paris is the capital of") for t in shown)
    assert_clean(page, "decoding")


CLICKS = 8


def test_step_clicks_each_give_one_token(open_page) -> None:
    """Each click of Step gives one token (a click that set the count the button was drawn with would make 30
    clicks in 2 s give 4 tokens). While a step runs the button is a disabled "Still running…" look-alike.
    Streamlit merges two rerun requests that reach the server before the script starts, so a second click
    sent within that instant is absorbed; the test clicks as soon as the page takes the next click."""
    page = open_page("decoding?strategies=greedy&n=4")
    page.get_by_role("heading", name="Generate one token at a time").wait_for(timeout=600_000)
    wait_idle(page, timeout=300_000)
    page.get_by_text("1 token(s) per strategy").first.wait_for(timeout=300_000)
    step = page.get_by_role("button", name="Step (+1 token)")
    for n in range(2, CLICKS + 2):
        step.click(timeout=300_000)  # Playwright waits while only the disabled look-alike is there
        page.get_by_text(f"{n} token(s) per strategy").first.wait_for(timeout=300_000)
    wait_idle(page, timeout=300_000)
    shown = page.get_by_text(re.compile(r"\d+ token\(s\) per strategy")).first.inner_text(timeout=300_000)
    page.screenshot(path=str(SHOTS / "decoding-fast-steps-end.png"), full_page=True)
    assert shown.startswith(f"{CLICKS + 1} token(s)"), shown
    assert page.get_by_role("button", name="Step (+1 token)").is_enabled()
    assert_clean(page, "decoding-fast-steps")
