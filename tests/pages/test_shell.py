"""The app shell: navigation builds and every registered page file exists."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def test_entry_renders_home_without_exception() -> None:
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    assert not at.exception, at.exception


def test_every_navigation_entry_has_a_page_file() -> None:
    from app.navigation import SECTIONS

    files = [f for pages in SECTIONS.values() for f, *_ in pages]
    assert len(files) >= 10
    for f in files:
        assert (ROOT / "pages" / f).is_file(), f


def test_paths_are_fenced_unless_the_server_listens_on_loopback_only(monkeypatch) -> None:
    import os

    monkeypatch.delenv("EXPLORER_RESTRICT_PATHS", raising=False)
    AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()  # default address: every interface
    assert os.environ["EXPLORER_RESTRICT_PATHS"] == "1"
    monkeypatch.setenv("EXPLORER_RESTRICT_PATHS", "0")  # an operator's explicit choice wins
    AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    assert os.environ["EXPLORER_RESTRICT_PATHS"] == "0"


def test_a_bad_setting_stops_the_app_with_one_message(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_WORKERS", "many")
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    shown = at.error[0].value.replace("\\", "") if len(at.error) == 1 else ""  # markdown escapes dropped
    assert "EXPLORER_MODEL_WORKERS='many' is not accepted" in shown
