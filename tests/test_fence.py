"""explorer.runtime.fence: on a shared server typed paths reach only the allowed roots, and say nothing else."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.runtime import fence, weights


@pytest.fixture
def fenced(tmp_path, monkeypatch):
    models = tmp_path / "models"
    (models / "my-bert").mkdir(parents=True)
    (models / "my-bert" / "config.json").write_text('{"model_type": "bert"}')
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(models))
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("EXPLORER_RESTRICT_PATHS", "1")
    return models


def test_off_by_default_for_local_use(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("EXPLORER_RESTRICT_PATHS", raising=False)
    assert not fence.restricted() and fence.check(str(tmp_path)) == tmp_path


@pytest.mark.parametrize("typed", ["/", "~", ".", "/proc/self/cwd", "..", "/root/.ssh", "/does/not/exist"])
def test_outside_paths_get_one_message_whether_they_exist_or_not(fenced, typed: str) -> None:
    with pytest.raises(ExplorerError) as err:
        weights.locate(typed)
    assert str(err.value) == fence.REFUSED


def test_dot_dot_cannot_escape_a_root(fenced) -> None:
    with pytest.raises(ExplorerError, match="models folder"):
        fence.check(str(fenced / "my-bert" / ".." / ".." / ".."))
    link = fenced / "escape"
    link.symlink_to("/")
    with pytest.raises(ExplorerError):
        fence.check(str(link))


def test_inside_paths_work_and_show_no_server_location(fenced) -> None:
    status = weights.locate(str(fenced / "my-bert"))
    assert status.status == "error"  # no weights in the fixture, but it was looked at
    assert "models folder/my-bert" in status.message and str(fenced) not in status.message
    assert fence.public(fenced / "my-bert") == "models folder/my-bert"


def test_a_typed_models_directory_is_fenced_too(fenced) -> None:
    with pytest.raises(ExplorerError, match="models folder"):
        fence.models_dir_default("/etc")
    assert fence.models_dir_default(str(fenced / "my-bert")) == (fenced / "my-bert").resolve()


def test_models_table_hides_install_paths(fenced) -> None:
    rows = {r["key"]: r for r in weights.status_table()}
    where = rows["sentence-bert"]["where"]
    assert "site-packages" not in where and "/" not in where.replace("models folder/", "")


@pytest.mark.parametrize("value, expected", [(None, None), ("", None), ("   ", None), (" /m ", "/m")])
def test_models_dir_env_is_read_one_way(monkeypatch, value, expected) -> None:
    if value is None:
        monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    else:
        monkeypatch.setenv("EXPLORER_MODELS_DIR", value)
    monkeypatch.delenv("EXPLORER_RESTRICT_PATHS", raising=False)
    assert fence.models_dir_env() == expected
    # the argument wins; without one, the variable (blank means unset, for the roots as well)
    assert fence.models_dir_default("elsewhere") is not None
    assert fence.models_dir_default(None) == (None if expected is None else fence.check(expected))
    assert any(label == "models folder" for label, _ in fence.allowed_roots()) is (expected is not None)


def test_models_dir_problem_says_when_the_folder_is_not_there(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("EXPLORER_RESTRICT_PATHS", raising=False)
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    afile = tmp_path / "weights.bin"
    afile.write_text("x")
    assert fence.models_dir_problem(None) is None and fence.models_dir_problem("  ") is None
    assert fence.models_dir_problem(str(tmp_path)) is None
    assert "does not exist" in (fence.models_dir_problem(str(tmp_path / "nope")) or "")
    assert "is a file" in (fence.models_dir_problem(str(afile)) or "")
    long = fence.models_dir_problem(str(tmp_path / ("x" * 200)))
    assert long is not None and "characters)" in long  # echoed cut
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path / "gone"))  # the variable is checked too
    assert "does not exist" in (fence.models_dir_problem(None) or "")


def test_a_fence_value_that_is_neither_on_nor_off_is_refused_not_ignored(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_RESTRICT_PATHS", "maybe")
    with pytest.raises(ExplorerError, match="EXPLORER_RESTRICT_PATHS='maybe'"):
        fence.restricted()
