"""explorer.core.persist: atomic writes; a killed writer or a corrupt file leaves a usable cache."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from explorer.core import persist


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_round_trip_and_fingerprint() -> None:
    persist.save("counts", {"bert-base": 109_482_240})
    assert persist.load("counts") == {"bert-base": 109_482_240}
    assert persist.fingerprint("a", 1) == persist.fingerprint("a", 1) != persist.fingerprint("a", 2)


def test_absent_or_corrupt_file_is_an_empty_cache_and_the_next_save_recovers(_cache) -> None:
    assert persist.load("missing") == {}
    (_cache / "counts.json").write_text('{"bert-base": 1')  # truncated
    assert persist.load("counts") == {}
    persist.save("counts", {"x": 1})
    assert persist.load("counts") == {"x": 1}
    (_cache / "counts.json").write_text("[1, 2]")  # valid JSON, wrong shape
    assert persist.load("counts") == {}


def test_writer_killed_mid_write_leaves_the_previous_state(_cache) -> None:
    persist.save("counts", {"old": 1})
    code = ("import os, time, json, explorer.core.persist as p\n"
            "real = json.dump\n"
            "def slow(data, f):\n"
            "    f.write('{\"half\": '); f.flush(); print('writing', flush=True); time.sleep(60)\n"
            "json.dump = slow\n"
            "p.save('counts', {'new': 2})\n")
    env = {**os.environ, "EXPLORER_CACHE_DIR": str(_cache)}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"  # the temporary file is half written now
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert persist.load("counts") == {"old": 1}  # the previous state is intact
    assert list(_cache.glob("*.tmp"))  # the killed writer's temporary file is left behind...
    persist.save("counts", {"new": 2})  # ...and does not disturb the next run
    assert json.loads((_cache / "counts.json").read_text()) == {"new": 2}


def test_failed_write_leaves_no_temporary_file(_cache, monkeypatch) -> None:
    def boom(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)
    persist.save("counts", {"x": 1})
    assert not list(_cache.glob("*.tmp")) and persist.load("counts") == {}


def test_publish_dir_replaces_an_earlier_folder_and_leaves_nothing_aside(tmp_path) -> None:
    from explorer.core.persist import publish_dir

    target = tmp_path / "model"
    for version in ("one", "two"):
        built = tmp_path / f".model.tmp-{version}"
        built.mkdir()
        (built / "weights.txt").write_text(version)
        publish_dir(built, target)
        assert (target / "weights.txt").read_text() == version
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
