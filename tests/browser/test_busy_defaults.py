"""Every live page's defaults answer on a machine whose cores are oversubscribed: with four processes spinning on
the CPU (a classroom server), Fill-mask and Spans & QA once ended with only "This request was stopped after 61 s"
and no answer at all.

A server of its own (cold: nothing from the other browser tests is cached, every model is loaded under load), four
processes spinning for the whole module, and each live page opened with its defaults: each must show its answers
(every column of Fill-mask, the span and the written answer of Spans & QA, the continuation of the Decoding lab,
the matrix and the late-interaction ranking of Similarity, ELECTRA's strip, the attention map, DeBERTa's terms on
the Mechanisms page). Where a request's time ran out, what it computed is shown with a notice saying what was cut,
in the column it belongs to; a page-wide "stopped" box, an error or an exception fails."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest

from tests.browser.conftest import assert_clean, new_context, streamlit_server, wait_idle

# alone: its four spinning processes would slow every test of another worker beside it; kept apart when the slow
# tier runs on workers (the Makefile's note on `make test`)
pytestmark = [pytest.mark.browser, pytest.mark.alone]

HOGS = 4  # processes spinning on the CPU, whatever the machine's cores (CI: 2)
WAIT_MS = 420_000  # a cold load under this load takes minutes; the requests' own budgets end the work
# What each page shows once it has answered (something computed, not a message), and how many of each: visible
# texts first, then texts of tabs the page has not opened (in the page, not on screen).
ANSWERED: dict[str, tuple[tuple[str | re.Pattern[str], int, str], ...]] = {
    "fill-mask": ((re.compile(r"\d ms · \d+ tokens"), 2, "visible"),  # each column's caption, then the CSV
                  ("Download CSV", 1, "visible")),
    "spans": (("decoder (causal LM)", 1, "visible"), ("Answer (generative):", 1, "attached")),
    "decoding": (("greedy: ", 1, "visible"),),
    "similarity": (("all-MiniLM-L6-v2", 1, "visible"), ("Kendall tau vs bi-encoder", 1, "attached")),
    "electra": (("tokens replaced · accuracy at 0.5", 1, "visible"),),
    "attention": (("Self-attention: layer 0, head 0", 1, "visible"),),
    "mechanisms": (("Mean |term| per head", 1, "visible"),),  # its first tab: the others run when opened
}
# What an anytime notice says about the part it kept: a stop without one of these is a stop with nothing.
KEPT = ("candidates were scored", "answers of up to", "Filled:", "written before the stop",
        "generated before the stop", "tokens so far")


@pytest.fixture(scope="module")
def busy_server() -> Iterator[str]:
    with streamlit_server() as url:  # its own: results cached by the other browser tests would prove nothing
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(HOGS)]
        try:
            yield url
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()


@pytest.fixture()
def open_busy(browser, busy_server) -> Iterator[Callable[[str], object]]:
    context = new_context(browser)

    def _open(path: str):
        page = context.new_page()
        page.goto(f"{busy_server}/{path}")
        wait_idle(page, timeout=WAIT_MS)
        return page

    yield _open
    context.close()


@pytest.mark.parametrize("page_name", list(ANSWERED))
def test_the_defaults_answer_with_the_cores_oversubscribed(open_busy, page_name: str) -> None:
    page = open_busy(page_name)
    for text, count, state in ANSWERED[page_name]:  # each column drawn as soon as its model has answered
        page.get_by_text(text).nth(count - 1).wait_for(state=state, timeout=WAIT_MS)  # answers, perhaps in part
    wait_idle(page, timeout=WAIT_MS)
    main = page.locator("[data-testid='stMain']").inner_text()
    assert "This request was stopped" not in main or all(  # every stop notice keeps what was computed
        any(kept in block for kept in KEPT) for block in main.split("This request was stopped")[1:]), main[-3000:]
    assert_clean(page, f"busy-{page_name}")
