"""A page's own defaults answer on a machine whose cores are busy: Spans & QA opened with no input while
another heavy job shares the cores must not show "This request was stopped after 63 s" and nothing else.

Two processes spin on the CPU for the whole test (as many as this machine has cores, at most two), and the live
pages are opened with their defaults: each must show its answer; where the budget runs out, what was computed so
far is shown with a notice saying what is missing, never the stop alone."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser

HOGS = min(2, os.cpu_count() or 1)
# What each page shows once it has answered (something computed, not a message): its results' captions.
ANSWERED = {"spans": "decoder (causal LM)", "decoding": "greedy: ", "similarity": "all-MiniLM-L6-v2"}


@pytest.fixture(scope="module")
def busy_cores() -> Iterator[None]:
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(HOGS)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


@pytest.mark.parametrize("page_name", list(ANSWERED))
def test_the_defaults_answer_with_the_cores_busy(busy_cores, open_page, page_name: str) -> None:
    page = open_page(page_name)
    wait_idle(page, timeout=240_000)
    page.get_by_text(ANSWERED[page_name]).first.wait_for(timeout=240_000)  # an answer, perhaps in part
    stopped = page.get_by_text("was stopped after")
    if stopped.count():  # the budget ran out: the notice must come with what was computed (checked above)
        assert "Filled:" in stopped.first.inner_text() or "candidates were scored" in stopped.first.inner_text()
    assert_clean(page, f"busy-{page_name}")
