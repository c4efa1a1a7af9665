"""One upload limit: Streamlit's server.maxUploadSize in .streamlit/config.toml (which cannot import
Python: this test is the link), the Lab's uploader and its text, the corpus's cap and the README all equal
explorer.core.userfiles.MAX_UPLOAD_MB. Where they differ, a 2 MB text can meet a server limit of 1 MB under
an uploader promising 19 MB, and the visitor sees "AxiosError: Request failed with status code 413".
tests/browser/test_upload_limit.py uploads files just under and just over it in a real browser."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from streamlit.testing.v1 import AppTest

from explorer.core.userfiles import MAX_UPLOAD_BYTES, MAX_UPLOAD_MB
from explorer.training import corpus

ROOT = Path(__file__).resolve().parents[1]


def test_the_server_setting_equals_the_library_constant() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] == MAX_UPLOAD_MB
    assert MAX_UPLOAD_BYTES == MAX_UPLOAD_MB * 2**20 == corpus.MAX_FILE_BYTES  # Streamlit counts MB as 2^20 bytes


def test_every_uploader_takes_its_size_from_the_constant() -> None:
    """No page passes a number of its own: max_upload_size is the constant, or left to the server setting."""
    for page in sorted((ROOT / "pages").glob("*.py")):
        for node in ast.walk(ast.parse(page.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "file_uploader":
                sizes = [k.value for k in node.keywords if k.arg == "max_upload_size"]
                assert all(isinstance(v, ast.Name) and v.id == "MAX_UPLOAD_MB" for v in sizes), page.name


def test_the_lab_uploader_and_the_readme_quote_it(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_LAB_QUICK", "1")
    at = AppTest.from_file(str(ROOT / "pages" / "lab.py"), default_timeout=120).run()
    uploader = at.get("file_uploader")[0].proto
    assert uploader.max_upload_size_mb == MAX_UPLOAD_MB
    assert f"at most {MAX_UPLOAD_MB} MB" in uploader.label and f"{MAX_UPLOAD_MB} MB" in uploader.help
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"to {MAX_UPLOAD_MB} MB, the app's one upload limit" in readme
