"""explorer.architecture.census: counts cached on disk, recomputed when a config or our code changes."""

from __future__ import annotations

import json

from explorer.architecture import analysis, census
from explorer.core import persist


def test_counts_are_cached_and_invalidated(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    calls: list[str] = []
    first = census.catalog_params(lambda f, msg: calls.append(msg))
    assert first["bert-base"] == analysis.base_params_of_variant("bert-base") == 109_482_240
    assert len(calls) == len(first)
    calls.clear()
    assert census.catalog_params(lambda f, msg: calls.append(msg)) == first and calls == []
    stored = json.loads((tmp_path / "catalog-params.json").read_text())
    stored["gpt2"]["fingerprint"] = "stale"
    stored["gpt2"]["params"] = 1
    (tmp_path / "catalog-params.json").write_text(json.dumps(stored))
    again = census.catalog_params(lambda f, msg: calls.append(msg))
    assert again["gpt2"] == first["gpt2"] and len(calls) == 1


def test_code_source_follows_edits_so_fingerprints_change(tmp_path, monkeypatch) -> None:
    """A stored result keyed on our code is recomputed after the code changes (imported or not)."""
    import importlib
    import inspect
    import sys

    module = tmp_path / "census_probe_module.py"
    module.write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = census.code_source(("census_probe_module",))
    assert before == "VALUE = 1\n"  # read through the loader: not imported
    module.write_text("VALUE = 2\n")
    census.code_source.cache_clear()
    after = census.code_source(("census_probe_module",))
    assert persist.fingerprint(before) != persist.fingerprint(after)
    loaded = importlib.import_module("census_probe_module")
    census.code_source.cache_clear()
    assert census.code_source(("census_probe_module",)) == inspect.getsource(loaded) == after
    monkeypatch.delitem(sys.modules, "census_probe_module")
    census.code_source.cache_clear()
