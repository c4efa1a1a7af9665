"""explorer.census / persist: counts cached on disk, recomputed when their inputs change."""

from __future__ import annotations

import json

from explorer import analysis, census, persist


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


def test_a_corrupt_cache_file_is_ignored(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    (tmp_path / "x.json").write_text("{half")
    assert persist.load("x") == {}
    persist.save("x", {"a": 1})
    assert persist.load("x") == {"a": 1}
