"""explorer.core.settings: one parser per type, one message for a bad value, README's table generated."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.core import settings
from explorer.core.errors import ExplorerError

ROOT = Path(__file__).resolve().parents[1]
TABLE = re.compile(r"<!-- settings:begin -->\n(.*?)<!-- settings:end -->", re.S)


def test_readme_table_is_the_generated_one() -> None:
    found = TABLE.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(found) == 1, "README.md needs one <!-- settings:begin --> ... <!-- settings:end --> block"
    assert found[0] == settings.markdown(), (
        "README's settings table is stale: replace the lines between its settings markers with the output of "
        "`python -m explorer.core.settings --markdown`")


def test_the_module_prints_the_table() -> None:
    out = subprocess.run([sys.executable, "-m", "explorer.core.settings", "--markdown"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert out == settings.markdown()


def test_every_declaration_is_complete_and_listed_under_its_name() -> None:
    assert len(settings.SETTINGS) >= 21
    for name, s in settings.SETTINGS.items():
        assert name == s.name and name.startswith("EXPLORER_")
        assert s.kind in ("bool", "int", "float", "path", "text") and s.meaning and s.accepts
        assert s.default is not None or s.derived, f"{name}: say what an unset value means"
        assert s.read({}) == s.default  # unset reads as the declared default


@pytest.mark.parametrize("raw, expected", [("1", True), ("TRUE", True), (" yes ", True), ("On", True),
                                           ("0", False), ("false", False), ("NO", False), ("off", False),
                                           ("", False), ("   ", False)])
def test_booleans_take_the_usual_words_in_any_case(raw: str, expected: bool) -> None:
    assert settings.LAB_QUICK.read({"EXPLORER_LAB_QUICK": raw}) is expected
    assert settings.RESTRICT_PATHS.read({"EXPLORER_RESTRICT_PATHS": raw}) is expected


@pytest.mark.parametrize("raw", ["2", "enabled", "y", "true!"])
def test_a_boolean_that_is_neither_is_refused(raw: str) -> None:
    with pytest.raises(ExplorerError, match=rf"EXPLORER_RESTRICT_PATHS='{re.escape(raw)}' .*1/true/yes/on or "
                                            r"0/false/no/off\. Fix it, or unset it for the default"):
        settings.RESTRICT_PATHS.read({"EXPLORER_RESTRICT_PATHS": raw})


def test_whole_numbers_have_bounds() -> None:
    env = {"EXPLORER_MODEL_WORKERS": "4", "EXPLORER_LAB_ACTIVE": " 1024 ", "EXPLORER_MODEL_CACHE_MB": "0"}
    assert settings.get("EXPLORER_MODEL_WORKERS", env) == 4 and settings.MODEL_CACHE_MB.read(env) == 0
    with pytest.raises(ExplorerError, match="EXPLORER_LAB_ACTIVE='1024' .* from 1 to 1,000"):
        settings.LAB_ACTIVE.read(env)
    for bad in ("0", "-1", "2.5", "four", "1e3"):
        with pytest.raises(ExplorerError, match="whole number of jobs from 1 to 1,024"):
            settings.MODEL_WORKERS.read({"EXPLORER_MODEL_WORKERS": bad})


def test_numbers_have_bounds_and_must_be_finite() -> None:
    assert settings.MEMORY_CAP_GB.read({"EXPLORER_MEMORY_CAP_GB": "1e-6"}) == 1e-6
    assert settings.IDLE_EVICT_S.read({"EXPLORER_IDLE_EVICT_S": "0"}) == 0.0  # 0 or more
    assert settings.ENDPOINT_TIMEOUT.read({"EXPLORER_ENDPOINT_TIMEOUT": "3600"}) == 3600.0
    for bad in ("0", "-2", "nan", "inf", "lots"):
        with pytest.raises(ExplorerError, match=r"EXPLORER_MEMORY_CAP_GB=.* a number of GB above 0"):
            settings.MEMORY_CAP_GB.read({"EXPLORER_MEMORY_CAP_GB": bad})
    with pytest.raises(ExplorerError, match="from 1 to 3600"):
        settings.ENDPOINT_TIMEOUT.read({"EXPLORER_ENDPOINT_TIMEOUT": "3601"})


def test_paths_and_texts_are_taken_as_typed_without_surrounding_spaces() -> None:
    assert settings.MODELS_DIR.read({"EXPLORER_MODELS_DIR": " /m "}) == "/m"
    assert settings.CACHE_DIR.read({}) == "~/.cache/transformer-explorer"
    assert settings.ENDPOINT_NAME.read({"EXPLORER_ENDPOINT_NAME": " "}) == "served"
    with pytest.raises(ExplorerError, match="EXPLORER_MODELS_DIR=.*characters"):
        settings.MODELS_DIR.read({"EXPLORER_MODELS_DIR": "x" * 5000})


def test_a_long_bad_value_is_echoed_cut() -> None:
    with pytest.raises(ExplorerError) as err:
        settings.LAB_ACTIVE.read({"EXPLORER_LAB_ACTIVE": "9" * 10_000})
    assert "(10,000 characters)" in str(err.value) and len(str(err.value)) < 400


def test_reads_happen_at_call_time(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_LAB_ACTIVE", "3")
    assert settings.get("EXPLORER_LAB_ACTIVE") == 3
    monkeypatch.delenv("EXPLORER_LAB_ACTIVE")
    assert settings.get("EXPLORER_LAB_ACTIVE") == 8


def test_an_undeclared_name_is_a_programming_error() -> None:
    with pytest.raises(ExplorerError, match="declare it in explorer/core/settings.py"):
        settings.get("EXPLORER_NOPE")


def test_check_all_names_every_bad_value_in_one_line() -> None:
    settings.check_all({"EXPLORER_LAB_QUICK": "1"})
    with pytest.raises(ExplorerError) as err:
        settings.check_all({"EXPLORER_LAB_QUICK": "maybe", "EXPLORER_MODEL_WORKERS": "x"})
    message = str(err.value)
    assert "EXPLORER_LAB_QUICK='maybe'" in message and "EXPLORER_MODEL_WORKERS='x'" in message
    assert "\n" not in message


def test_set_default_keeps_the_operators_choice(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_RESTRICT_PATHS", "0")
    settings.set_default("EXPLORER_RESTRICT_PATHS", "1")
    assert settings.RESTRICT_PATHS.read() is False
    monkeypatch.delenv("EXPLORER_RESTRICT_PATHS")
    settings.set_default("EXPLORER_RESTRICT_PATHS", "1")
    assert settings.RESTRICT_PATHS.read() is True


def test_the_cli_stops_on_a_bad_value_with_one_line_and_exit_2(monkeypatch, capsys) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_WORKERS", "many")
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: EXPLORER_MODEL_WORKERS='many'") and err.count("\n") == 1
