"""explorer.runtime.weights: resolution order, layouts, statuses, and the one explicit download."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from explorer.core.errors import ExplorerError
from explorer.runtime import fence, resolve, weights
from tests.tiny_models import fake_variant, patch_catalog, save_tiny


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    return save_tiny("bert", tmp_path_factory.mktemp("w") / "bert")


@pytest.fixture()
def catalog(monkeypatch):
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    patch_catalog(monkeypatch, fake_variant("tiny-bert", "bert", "org/tiny-bert"),
                  fake_variant("tiny-roberta", "roberta", "org/tiny-roberta", "gpt2"),
                  fake_variant("sentence-bert", "bert", weights.BUNDLED_HUB_ID),
                  fake_variant("no-hub", "bert", None))


def test_missing_path_is_an_error_status() -> None:
    st = weights.locate("/no/such/dir")
    assert st.status == "error" and st.path is None and "does not exist" in st.message


def test_saved_directory_is_ready_with_size_and_format(tiny_bert: Path) -> None:
    st = weights.locate(str(tiny_bert))
    assert (st.status, st.source, st.formats) == ("ready", "path", ("safetensors",))
    assert st.disk_bytes == sum(p.stat().st_size for p in tiny_bert.iterdir())
    assert st.to_dict()["formats"] == ["safetensors"]


def test_pickle_only_directory_says_opt_in(tmp_path: Path) -> None:
    save_tiny("bert", tmp_path / "b", bin_only=True)
    st = weights.locate(str(tmp_path / "b"))
    assert st.formats == ("bin",) and "allow-pickle" in st.message


def test_directory_without_config_or_weights(tmp_path: Path, tiny_bert: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert "no config.json" in weights.locate(str(tmp_path / "empty")).message
    shutil.copy(tiny_bert / "config.json", tmp_path / "config.json")
    st = weights.locate(str(tmp_path))
    assert st.status == "error" and "no weights" in st.message


@pytest.mark.parametrize("layout", ["tiny-bert", "org--tiny-bert", "org/tiny-bert", "tiny-bert-flat"])
def test_models_dir_layouts(catalog, tmp_path: Path, tiny_bert: Path, layout: str) -> None:
    sub = "tiny-bert" if layout == "tiny-bert-flat" else layout
    shutil.copytree(tiny_bert, tmp_path / sub)
    st = weights.locate("tiny-bert", str(tmp_path))
    assert (st.status, st.source, Path(st.path)) == ("ready", "models-dir", tmp_path / sub)


def test_env_models_dir_and_not_present(catalog, monkeypatch, tmp_path: Path, tiny_bert: Path) -> None:
    st = weights.locate("tiny-bert")
    assert st.status == "not present" and "python -m explorer download tiny-bert" in st.message
    shutil.copytree(tiny_bert, tmp_path / "org--tiny-bert")
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path))
    assert weights.locate("tiny-bert").source == "models-dir"


def test_hf_cache_is_second(catalog, monkeypatch, tmp_path: Path, tiny_bert: Path) -> None:
    repo = tmp_path / "hub" / "models--org--tiny-bert"
    shutil.copytree(tiny_bert, repo / "snapshots" / ("a" * 40))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    st = weights.locate("tiny-bert")
    assert (st.status, st.source) == ("ready", "hf-cache")
    shutil.copytree(tiny_bert, tmp_path / "mine" / "tiny-bert")
    assert weights.locate("tiny-bert", str(tmp_path / "mine")).source == "models-dir"  # user dir wins


def test_bundled_minilm(catalog, bundled_encoder) -> None:
    st = weights.locate("sentence-bert")
    assert (st.status, st.source) == ("ready", "bundled") and st.disk_bytes > 80_000_000


def test_garbage_name_and_empty(catalog) -> None:
    with pytest.raises(ExplorerError, match="neither a catalog key"):
        weights.locate("no such thing")
    with pytest.raises(ExplorerError, match="No model given"):
        weights.locate("   ")


def test_status_all_covers_catalog(catalog) -> None:
    rows = weights.status_all()
    assert [r.key for r in rows] == ["tiny-bert", "tiny-roberta", "sentence-bert", "no-hub"]
    assert {r.status for r in rows} == {"not present", "ready"}


def test_status_table_names_the_checkpoint_and_where(catalog) -> None:
    rows = {r["key"]: r for r in weights.status_table()}
    assert list(rows) == ["tiny-bert", "tiny-roberta", "sentence-bert", "no-hub"]
    assert rows["no-hub"]["checkpoint"] == "(none published)" and rows["no-hub"]["where"] == ""
    assert rows["sentence-bert"]["status"] == "ready" and rows["sentence-bert"]["where"]
    assert rows["sentence-bert"]["size (MB)"] > 0


def test_architecture_mismatch(catalog, tiny_bert: Path) -> None:
    msg = weights.architecture_error("tiny-roberta", tiny_bert)
    assert msg and "'bert'" in msg and "'roberta'" in msg
    assert weights.architecture_error("tiny-bert", tiny_bert) is None


def test_relative_directory_name(catalog, monkeypatch, tmp_path: Path, tiny_bert: Path) -> None:
    shutil.copytree(tiny_bert, tmp_path / "my-model")
    monkeypatch.chdir(tmp_path)
    st = weights.locate("my-model")
    assert (st.status, st.source, Path(st.path)) == ("ready", "path", tmp_path / "my-model")


@pytest.mark.parametrize("text", ["x " * 25_000, "a" * 300, "a\0b"])
def test_impossible_typed_paths_are_a_clear_error_not_an_oserror(text: str) -> None:
    from explorer.core.errors import ExplorerError

    with pytest.raises(ExplorerError, match="cannot exist"):
        weights.locate(text)
    with pytest.raises(ExplorerError, match="cannot exist"):
        fence.models_dir_default(text)


def test_resolved_weights_are_real_random_or_not_ready(catalog, tmp_path: Path, tiny_bert: Path) -> None:
    shutil.copytree(tiny_bert, tmp_path / "tiny-bert")
    real = resolve.resolve("tiny-bert", str(tmp_path), allow_random=True)
    assert (real.ready, real.random_weights) == (True, False) and real.stamp.startswith(str(tmp_path / "tiny-bert"))
    missing = resolve.resolve("tiny-roberta", str(tmp_path), allow_random=True)
    assert (missing.ready, missing.random_weights, missing.stamp) == (False, True, "random")
    refused = resolve.resolve("tiny-roberta", str(tmp_path))
    assert not refused.random_weights and "python -m explorer download tiny-roberta" in refused.reason
    assert missing.missing and refused.missing and not real.missing  # a download fixes these two
    garbage = resolve.resolve("no such thing", None, allow_random=True)
    assert (garbage.ready, garbage.random_weights) == (False, False) and "neither a catalog key" in garbage.reason
    assert not garbage.missing  # a typo is an error to fix, not weights to fetch
    broken = resolve.resolve(str(tmp_path / "nowhere"), None, allow_random=True)
    assert not broken.random_weights and "does not exist" in broken.reason  # a typo never runs untrained
    assert not broken.missing


def test_weights_stamp_changes_when_a_file_changes(tmp_path: Path, tiny_bert: Path) -> None:
    import os

    folder = shutil.copytree(tiny_bert, tmp_path / "b")
    before = weights.weights_stamp(str(folder))
    os.utime(folder / "config.json", ns=(4 * 10**18, 4 * 10**18))  # newer than every other file
    assert weights.weights_stamp(str(folder)) == 4e9 != before
    assert weights.weights_stamp(None) == weights.weights_stamp(str(tmp_path / "missing")) == 0.0


@pytest.mark.parametrize("content", [None, b"[1, 2]", b"{not json", b"\xff\xfe", b'{"model_type": "bert"}'])
def test_config_model_type_reads_only_a_json_object(tmp_path: Path, content: bytes | None) -> None:
    if content is not None:
        (tmp_path / "config.json").write_bytes(content)
    expected = "bert" if content == b'{"model_type": "bert"}' else None
    assert weights.config_model_type(tmp_path) == expected


@pytest.fixture()
def legacy_catalog(monkeypatch, tmp_path: Path):
    """A catalog whose key differs from its checkpoint's name (like bert-base and google-bert/bert-base-uncased), and
    an empty HF cache (nothing downloaded)."""
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    patch_catalog(monkeypatch, fake_variant("tb", "bert", "org/tiny-bert-uncased"))


def test_a_legacy_hub_name_is_a_hub_id_whose_weights_are_not_downloaded(legacy_catalog) -> None:
    legacy, namespaced = weights.locate("tiny-bert-uncased"), weights.locate("org/tiny-bert-uncased")
    for st, asked in ((legacy, "tiny-bert-uncased"), (namespaced, "org/tiny-bert-uncased")):
        assert st.status == "not present" and f"python -m explorer download {asked}" in st.message
        assert "The catalog key 'tb' names the same checkpoint" in st.message  # the catalog's own key, suggested
    assert "org/tiny-bert-uncased on the hub" in legacy.message  # where the hub has moved the legacy name
    other = weights.locate("gpt2-medium")  # a legacy name the catalog does not hold: still a hub id
    assert other.status == "not present" and "download gpt2-medium" in other.message and "catalog key" not in \
        other.message
    ref = resolve.resolve("tiny-bert-uncased", None, allow_random=False)
    assert (ref.ready, ref.missing) == (False, True)  # a download fixes it, like any hub id


def test_a_legacy_name_finds_its_weights_in_the_cache_and_the_models_folder(legacy_catalog, tmp_path: Path,
                                                                           tiny_bert: Path) -> None:
    repo = tmp_path / "hub" / "models--tiny-bert-uncased"  # what from_pretrained("tiny-bert-uncased") cached
    shutil.copytree(tiny_bert, repo / "snapshots" / ("b" * 40))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("b" * 40)
    st = weights.locate("tiny-bert-uncased")
    assert (st.status, st.source) == ("ready", "hf-cache")
    shutil.copytree(tiny_bert, tmp_path / "mine" / "org--tiny-bert-uncased")  # downloaded under the owner's name
    assert weights.locate("tiny-bert-uncased", str(tmp_path / "mine")).source == "models-dir"
