"""Models page (AppTest): statuses of every variant, models directory, download failure, memory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.architecture import catalog
from explorer.core.errors import shorten
from explorer.runtime import loading, modelcache
from explorer.runtime.resolve import resolve
from tests.tiny_models import save_tiny

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "models.py")


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    return save_tiny("bert", tmp_path_factory.mktemp("mpage") / "bert")


def _app(monkeypatch) -> AppTest:
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    return AppTest.from_file(PAGE, default_timeout=120)


def _clean(at: AppTest) -> None:
    assert not at.exception, at.exception[0].message if at.exception else ""


def test_every_variant_listed_with_status(monkeypatch, bundled_encoder) -> None:
    at = _app(monkeypatch).run()
    _clean(at)
    table = at.dataframe[0].value
    assert list(table["key"]) == catalog.keys()
    bundled = table[table["key"] == "sentence-bert"].iloc[0]
    assert (bundled["status"], bundled["found in"]) == ("ready", "bundled") and bundled["size (MB)"] > 80
    assert set(table["status"]) <= {"ready", "not present", "downloading", "error"}
    assert at.metric[0].value.endswith(f"/ {len(catalog.keys())}")


def test_models_directory_makes_a_variant_ready(monkeypatch, tmp_path: Path, tiny_bert: Path) -> None:
    shutil.copytree(tiny_bert, tmp_path / "bert-base")
    at = _app(monkeypatch).run()
    at.text_input(key="models_dir_input").set_value(str(tmp_path)).run()
    _clean(at)
    row = at.dataframe[0].value.set_index("key").loc["bert-base"]
    assert (row["status"], row["found in"]) == ("ready", "models-dir")
    assert "bert-base" not in at.selectbox(key="dl_key").options


@pytest.mark.parametrize("name", ["<b>x</b> missing", "a file"])
def test_a_models_directory_that_is_not_a_folder_is_said(monkeypatch, tmp_path: Path, name: str) -> None:
    typed = str(tmp_path / name)
    if name == "a file":
        (tmp_path / name).write_text("not a folder")
    at = _app(monkeypatch).run()
    at.text_input(key="models_dir_input").set_value(typed).run()
    _clean(at)
    warnings = [w.value.replace("\\", "") for w in at.warning]
    quoted = shorten(typed)  # a long temporary path (a pytest-xdist worker's) is quoted cut, with its length
    assert any(quoted in w and ("does not exist" in w or "is a file" in w) for w in warnings), warnings
    at.text_input(key="models_dir_input").set_value("").run()
    assert not any("models directory" in w.value for w in at.warning)


def test_download_failure_is_one_clear_line(monkeypatch) -> None:
    from huggingface_hub import HfApi

    def offline(self, repo_id, **kw):
        raise ConnectionError("Name or service not known")

    monkeypatch.setattr(HfApi, "model_info", offline)
    at = _app(monkeypatch).run()
    at.selectbox(key="dl_key").set_value("electra-small-generator").run()
    at.button(key="dl_button").click().run()
    _clean(at)
    from app.ui import markdown_safe

    assert [e.value for e in at.error] == [markdown_safe(
        "Download of google/electra-small-generator failed (ConnectionError: Name or service not known). "
        "Check the network connection, or copy the weights into EXPLORER_MODELS_DIR.")]


@pytest.mark.parametrize(("path", "expected"), [
    ("/no/such/dir", "does not exist"), ("<script>alert(1)</script>", "neither a catalog key"), ("   ", None),
])
def test_check_directory_bad_input(monkeypatch, path: str, expected: str | None) -> None:
    at = _app(monkeypatch).run()
    at.text_input(key="check_path").set_value(path).run()
    _clean(at)
    assert (expected is None and not at.error) or any(expected in e.value for e in at.error)


def test_check_directory_shows_a_markdown_path_literally(monkeypatch, tmp_path: Path) -> None:
    """A path with markdown in it (``**bold**``) is shown as typed, not rendered bold without its stars."""
    from app.ui import markdown_safe

    folder = tmp_path / "**bold** dir"
    folder.mkdir()
    at = _app(monkeypatch).run()
    at.text_input(key="check_path").set_value(str(folder)).run()
    _clean(at)
    assert at.error and at.error[0].value.startswith(markdown_safe(f"error: {folder}"))


def test_check_directory_and_memory(monkeypatch, tiny_bert: Path) -> None:
    modelcache.clear_cache()
    loading.load_model(resolve(str(tiny_bert)), "masked-lm")
    at = _app(monkeypatch).run()
    at.text_input(key="check_path").set_value(str(tiny_bert)).run()
    _clean(at)
    assert any("ready" in s.value for s in at.success)
    memory = at.dataframe[1].value
    assert list(memory["task"]) == ["masked-lm"] and memory["memory_mb"].iloc[0] > 0
    at.button(key="free_memory").click().run()
    assert modelcache.cache_info() == []


def test_download_in_progress_elsewhere_shows_downloading(monkeypatch) -> None:
    from explorer.runtime import weights

    monkeypatch.setitem(weights._DOWNLOADING, "bert-base", 0.4)  # another session is downloading it
    at = _app(monkeypatch).run()
    _clean(at)
    assert at.dataframe[0].value.set_index("key").loc["bert-base", "status"] == "downloading"
