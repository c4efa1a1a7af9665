"""A real Streamlit server and a real headless Chromium (Debian's package) driven by Playwright.

One server for the whole session; each test opens a fresh page. ``open_page(path)`` waits
until the script has finished running; ``assert_clean(page)`` fails on any exception or error box.
Screenshots land in tests/browser/screenshots/.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

NAVIGATION_MS = 120_000  # a page's HTML and scripts loaded (the script's run is waited for apart: wait_idle)

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("streamlit server did not become healthy in time")


def server_command(port: int, paced: Mapping[str, float] | None = None) -> list[str]:
    """``streamlit run app/main.py`` on ``port`` of 127.0.0.1; with ``paced`` (function -> seconds, see
    tests/browser/paced.py) each named function pauses that long before every call."""
    run = ["run", str(ROOT / "app" / "main.py"), "--server.headless", "true", "--server.port", str(port),
           "--server.address", "127.0.0.1"]
    if not paced:
        return [sys.executable, "-m", "streamlit", *run]
    return [sys.executable, "-m", "tests.browser.paced", *(f"{k}={v}" for k, v in paced.items()), "--", *run]


@contextlib.contextmanager
def streamlit_server(paced: Mapping[str, float] | None = None, **extra_env: str) -> Iterator[str]:
    """A real ``streamlit run app/main.py`` on a free port of 127.0.0.1 with ``extra_env`` (and ``paced``
    functions: :func:`server_command`); yields its URL."""
    port = _free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", **extra_env}
    cmd = server_command(port, paced)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("Debian's chromium is not installed: run `make browser` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS)
        yield b
        b.close()


def wait_idle(page, timeout: float = 90_000) -> None:
    """Wait until Streamlit has finished running the script (no 'Running...' status)."""
    page.wait_for_selector("[data-testid='stApp']", timeout=timeout)
    # the script has started once the main area holds an element (a title at least)
    page.wait_for_selector("[data-testid='stMain'] [data-testid='stElementContainer']", timeout=timeout)
    page.wait_for_timeout(300)
    page.wait_for_function(
        "() => !document.querySelector(\"[data-testid='stStatusWidget']\")", timeout=timeout
    )
    page.wait_for_timeout(200)


def wait_url(page, *parts: str, timeout: float = 60_000) -> None:
    """Wait until the address holds one of ``parts``: a rerun writes its query parameters when it runs, which on a
    busy machine can be after :func:`wait_idle` returned."""
    page.wait_for_function("parts => parts.some(p => location.href.includes(p))", arg=list(parts), timeout=timeout)


def assert_clean(page, name: str, *, errors_expected: bool = False) -> None:
    """Fail on any exception box, and on any red error box unless the test provoked one on purpose.

    A page full of ``st.error`` boxes is as broken for a user as a traceback, so error boxes fail
    the test too (``errors_expected=True`` where the test typed bad input and checks the message).
    A screenshot is saved either way.
    """
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    boxes = page.locator("[data-testid='stException']")
    assert boxes.count() == 0, f"{name}: exception shown: {boxes.first.inner_text()[:500]}"
    if not errors_expected:
        errors = page.locator("[data-testid='stAlertContentError']")
        assert errors.count() == 0, f"{name}: error box shown: {errors.first.inner_text()[:500]}"


def new_context(browser):
    """A fresh visitor (its own cookies and Streamlit session) whose page loads wait up to ``NAVIGATION_MS``:
    Playwright's own 30 s once ran out for a page loading beside six others on two busy cores (the load test)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_navigation_timeout(NAVIGATION_MS)
    return context


@pytest.fixture()
def open_page(browser, server_url) -> Iterator[Callable[[str], object]]:
    context = new_context(browser)
    pages = []

    def _open(path: str = ""):
        page = context.new_page()
        pages.append(page)
        page.goto(f"{server_url}/{path.lstrip('/')}")
        wait_idle(page)
        return page

    yield _open
    context.close()
