"""explorer.runtime.doctor and ``python -m explorer doctor``: the report's shape (golden), sizes, fenced paths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.runtime import doctor


def _paths(obj: Any, prefix: str = "") -> set[str]:
    """Every key path of a JSON document; list items merged as ``[]`` (how many GPUs varies by machine)."""
    if isinstance(obj, dict):
        out = set()
        for key, value in obj.items():
            key = "*" if prefix.endswith("auto.unavailable") else key  # which devices are missing varies
            out |= {f"{prefix}.{key}"} | _paths(value, f"{prefix}.{key}")
        return out
    if isinstance(obj, list):
        return set().union(*(_paths(v, f"{prefix}[]") for v in obj)) if obj else set()
    return set()


def test_json_shape_matches_golden(golden, capsys) -> None:
    assert main(["doctor", "--json", "--no-sizes"]) == 0
    report = json.loads(capsys.readouterr().out)
    golden("cli/doctor-keys.txt", "\n".join(sorted(_paths(report))) + "\n")
    assert report["devices"][0]["device"] == "cpu" and report["devices"][0]["total_bytes"] > 0
    assert report["auto"]["choices"][:2] == ["auto", "cpu"] and report["versions"]["torch"]


def test_auto_is_what_placement_picks() -> None:
    from explorer.runtime import placement

    d = doctor.diagnose(sizes=False)
    device, dtype = placement.AUTO.resolve()
    assert (d.auto["device"], d.auto["dtype"]) == (device, placement.dtype_name(dtype))
    assert all(c.size_bytes is None for c in d.caches)  # sizes=False walks nothing


def test_folder_size_counts_files_once_and_stops(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.bin").write_bytes(b"1234")
    (tmp_path / "y.bin").write_bytes(b"12")
    (tmp_path / "link.bin").symlink_to(tmp_path / "a" / "x.bin")  # hub snapshots link to blobs
    assert doctor.folder_size(tmp_path) == (6, 2, False)
    assert doctor.folder_size(tmp_path, limit=1)[2] is True


def test_caches_have_sizes_and_fenced_paths_leak_nothing(tmp_path, monkeypatch, capsys) -> None:
    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    (cache / "models" / "w.bin").write_bytes(b"x" * 10)
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(cache))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("EXPLORER_RESTRICT_PATHS", "1")
    assert main(["doctor", "--json"]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path) not in out  # a shared server's report names none of its folders
    caches = {c["name"]: c for c in json.loads(out)["caches"]}
    assert caches["explorer cache"]["size_bytes"] >= 10 and caches["explorer cache"]["exists"]
    assert main(["doctor"]) == 0
    text = capsys.readouterr().out
    assert str(tmp_path) not in text and "auto picks:" in text and "caches:" in text


@pytest.mark.parametrize("argv", [["doctor", "--bogus"], ["doctor", "--json", "extra"]])
def test_bad_arguments_exit_2(argv, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1
