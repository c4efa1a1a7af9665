"""Real browser: the one upload limit (explorer.core.userfiles.MAX_UPLOAD_MB, equal to the server's maxUploadSize).

A text just under it is accepted and read by the Lab; one just over it gets Streamlit's own refusal under the
uploader, never "AxiosError ... 413" (what a 2 MB text met when the server allowed 1 MB and the uploader 19 MB)
and never a traceback. Streamlit's uploader counts a MB as 10^6 bytes (2^20 on Windows), its server and the library
2^20: "just under" is under the smaller, "just over" over the larger.
"""

from __future__ import annotations

import re

import pytest

from explorer.core.userfiles import MAX_UPLOAD_BYTES, MAX_UPLOAD_MB
from tests.browser.conftest import assert_clean, wait_idle

pytestmark = pytest.mark.browser


def _text(size: int) -> bytes:
    """``size`` bytes of distinct sentences (a repeated one would leave nothing held out to evaluate on)."""
    parts, n, i = [], 0, 0
    while n < size:
        line = f"Sentence {i} tells of item{i} and thing{i * 7} in order.\n\n"
        parts.append(line)
        n, i = n + len(line), i + 1
    return "".join(parts).encode()[:size]


def _upload(page, name: str, data: bytes) -> None:
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        {"name": name, "mimeType": "text/plain", "buffer": data})


def test_just_under_the_limit_is_accepted_and_just_over_gets_streamlits_own_refusal(open_page) -> None:
    page = open_page("lab?objectives=mlm")
    page.get_by_role("heading", name="Pretraining lab").wait_for(timeout=90_000)
    assert f"at most {MAX_UPLOAD_MB} MB" in page.locator("[data-testid='stFileUploader']").inner_text()

    _upload(page, "under.txt", _text(MAX_UPLOAD_MB * 10**6 - 64 * 1024))
    page.get_by_text(re.compile(r"Training text: under\.txt, [\d,]+ words")).wait_for(timeout=120_000)
    wait_idle(page)
    assert_clean(page, "upload_under_limit")
    assert "AxiosError" not in page.content() and "413" not in page.locator("[data-testid='stMain']").inner_text()

    page = open_page("lab?objectives=mlm")  # a fresh page: no earlier upload listed
    page.get_by_role("heading", name="Pretraining lab").wait_for(timeout=90_000)
    _upload(page, "over.txt", _text(MAX_UPLOAD_BYTES + 64 * 1024))
    uploader = page.locator("[data-testid='stFileUploader']")
    uploader.get_by_text(re.compile(rf"{MAX_UPLOAD_MB}(\.0)? ?MB or smaller", re.I)).wait_for(timeout=30_000)
    wait_idle(page)
    shown = page.locator("[data-testid='stMain']").inner_text()
    assert "AxiosError" not in shown and "status code 413" not in shown and "Traceback" not in shown, shown[:500]
    assert page.get_by_text(re.compile(r"Training text: over\.txt")).count() == 0  # never reached the page
    assert_clean(page, "upload_over_limit")
