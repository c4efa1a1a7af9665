"""explorer.runtime.download: no published checkpoint, network failure in one line, progress, bugs stay bugs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from explorer.core.errors import ExplorerError
from explorer.runtime import download as dl
from explorer.runtime import weights
from tests.tiny_models import fake_variant, patch_catalog, save_tiny


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    return save_tiny("bert", tmp_path_factory.mktemp("dl") / "bert")


@pytest.fixture()
def catalog(monkeypatch):
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    patch_catalog(monkeypatch, fake_variant("tiny-bert", "bert", "org/tiny-bert"), fake_variant("no-hub", "bert", None))


def test_download_without_checkpoint(catalog) -> None:
    with pytest.raises(ExplorerError, match="no published checkpoint"):
        dl.download("no-hub")


def test_download_network_failure_is_one_line_and_restores_offline(catalog, monkeypatch) -> None:
    from huggingface_hub import HfApi, constants

    seen = {}

    def fail(self, repo_id, **kw):
        seen["offline"], seen["timeout"] = constants.HF_HUB_OFFLINE, kw.get("timeout")
        raise ConnectionError("Name or service not known")

    monkeypatch.setattr(HfApi, "model_info", fail)
    before = constants.HF_HUB_OFFLINE
    with pytest.raises(ExplorerError, match="Download of org/tiny-bert failed") as err:
        dl.download("tiny-bert")
    assert "\n" not in str(err.value) and seen == {"offline": False, "timeout": dl.HUB_TIMEOUT_S}
    assert before == constants.HF_HUB_OFFLINE and weights.locate("tiny-bert").status == "not present"


def test_download_success_reports_progress(catalog, monkeypatch, tmp_path: Path, tiny_bert: Path) -> None:
    from types import SimpleNamespace

    import huggingface_hub

    files = sorted(p.name for p in tiny_bert.iterdir()) + ["pytorch_model.bin"]
    sibs = [SimpleNamespace(rfilename=f, size=10) for f in files]
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", lambda self, r, **kw: SimpleNamespace(siblings=sibs))
    fetched, during = [], []

    def fake_download(repo, name, local_dir=None, tqdm_class=None, **kw):
        during.append(weights.locate("tiny-bert").status)
        fetched.append(name)
        with tqdm_class(total=10, disable=True) as bar:  # what huggingface_hub does per chunk
            bar.update(4)
            bar.update(6)
        Path(local_dir).mkdir(parents=True, exist_ok=True)
        shutil.copy(tiny_bert / name, Path(local_dir) / name)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    fractions: list[float] = []
    st = dl.download("tiny-bert", str(tmp_path), progress=lambda f, what: fractions.append(f))
    assert "pytorch_model.bin" not in fetched and set(during) == {"downloading"}  # never pickles
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    n = len(files) - 1  # safetensors, config, tokenizer files (the .bin is skipped), 10 bytes each
    assert fractions[:3] == [0.0, pytest.approx(4 / (10 * n)), pytest.approx(10 / (10 * n))]  # per chunk
    assert (st.status, st.source, Path(st.path)) == ("ready", "models-dir", tmp_path / "tiny-bert")


def test_download_bug_is_not_reported_as_a_network_failure(catalog, monkeypatch) -> None:
    from huggingface_hub import HfApi

    monkeypatch.setattr(HfApi, "model_info", lambda self, r, **kw: {}["no such key"])
    with pytest.raises(KeyError):
        dl.download("tiny-bert")


def test_interrupted_download_leaves_the_previous_copy_and_the_next_one_completes(
        catalog, monkeypatch, tmp_path: Path, tiny_bert: Path) -> None:
    from types import SimpleNamespace

    import huggingface_hub

    files = sorted(p.name for p in tiny_bert.iterdir())
    sibs = [SimpleNamespace(rfilename=f, size=10) for f in files]
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", lambda self, r, **kw: SimpleNamespace(siblings=sibs))
    old = tmp_path / "tiny-bert"
    shutil.copytree(tiny_bert, old)  # a complete earlier download
    (old / "marker").write_text("old copy")
    calls = []

    def dying(repo, name, local_dir=None, tqdm_class=None, **kw):
        calls.append(name)
        if len(calls) == 2:
            raise OSError("connection reset")  # the network dies mid-download
        Path(local_dir).mkdir(parents=True, exist_ok=True)
        shutil.copy(tiny_bert / name, Path(local_dir) / name)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", dying)
    with pytest.raises(ExplorerError, match="failed"):
        dl.download("tiny-bert", str(tmp_path))
    assert (old / "marker").read_text() == "old copy" and weights.locate("tiny-bert", str(tmp_path)).status == "ready"

    def working(repo, name, local_dir=None, tqdm_class=None, **kw):
        Path(local_dir).mkdir(parents=True, exist_ok=True)
        shutil.copy(tiny_bert / name, Path(local_dir) / name)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", working)
    assert dl.download("tiny-bert", str(tmp_path)).status == "ready"
    assert not (old / "marker").exists()  # the new copy replaced the old one whole
    assert not list(tmp_path.glob(".tiny-bert.*"))  # no half-written sibling left behind
