"""explorer.runtime.modelcache: least recently used out under a memory budget, one lock per key."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.runtime import modelcache


@pytest.fixture(autouse=True)
def fresh():
    modelcache.clear_cache()
    yield
    modelcache.clear_cache()


def _entry(n_floats: int, name: str) -> SimpleNamespace:
    model = torch.nn.Linear(n_floats, 1, bias=False)  # n_floats * 4 bytes
    return SimpleNamespace(model=model, to_dict=lambda: {"name": name})


def test_model_bytes_counts_tied_weights_once() -> None:
    a = torch.nn.Linear(4, 4, bias=False)
    b = torch.nn.Sequential(a, a)
    assert modelcache.model_bytes(b) == modelcache.model_bytes(a) == 64


def test_lru_eviction_under_budget(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_CACHE_MB", "1")
    half = 2**20 // 4 // 2 + 1  # just over half the budget each
    modelcache.store(("a", "masked-lm"), _entry(half, "a"))
    modelcache.store(("b", "base"), _entry(half, "b"))
    assert [e["name"] for e in modelcache.cache_info()] == ["b"] and modelcache.cached(("a", "masked-lm")) is None
    assert modelcache.cache_info()[0]["task"] == "base"


def test_recent_use_protects_an_entry(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_CACHE_MB", "1")
    third = 2**20 // 4 // 3 + 1  # two fit in the budget, three do not
    for key in ("a", "b"):
        modelcache.store((key, "t"), _entry(third, key))
    assert modelcache.cached(("a", "t")) is not None  # "a" is now the most recently used
    modelcache.store(("c", "t"), _entry(third, "c"))
    assert [e["name"] for e in modelcache.cache_info()] == ["a", "c"]


def test_one_entry_larger_than_the_budget_still_stays(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_CACHE_MB", "1")
    modelcache.store(("big", "t"), _entry(2**20, "big"))  # 4 MB
    assert [e["name"] for e in modelcache.cache_info()] == ["big"]


def test_key_lock_is_one_lock_per_key() -> None:
    got: list[threading.Lock] = []
    threads = [threading.Thread(target=lambda: got.append(modelcache.key_lock(("k", "t")))) for _ in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len({id(lock) for lock in got}) == 1 and modelcache.key_lock(("other", "t")) is not got[0]


def test_settle_evicts_idle_entries_down_to_the_resident_bound(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_CACHE_MB", "10")
    monkeypatch.setenv("EXPLORER_RESIDENT_MB", "1")
    monkeypatch.setenv("EXPLORER_IDLE_EVICT_S", "30")
    third = 2**20 // 4 // 3 + 1  # two fit in the resident bound, three do not
    for key in ("a", "b", "c"):
        modelcache.store((key, "t"), _entry(third, key))
    assert modelcache.settle() == []  # all just used: nothing is idle yet
    later = __import__("time").monotonic() + 31
    assert modelcache.settle(now=later) == [("a", "t")]  # the least recently used, down to the bound
    assert [e["name"] for e in modelcache.cache_info()] == ["b", "c"]
    assert modelcache.settle(now=later + 100) == []  # within the bound: kept however idle


def test_settle_keeps_what_was_used_recently(monkeypatch) -> None:
    import time

    monkeypatch.setenv("EXPLORER_RESIDENT_MB", "0")
    monkeypatch.setenv("EXPLORER_IDLE_EVICT_S", "30")
    modelcache.store(("old", "t"), _entry(8, "old"))
    modelcache.store(("new", "t"), _entry(8, "new"))
    now = time.monotonic()
    with modelcache._CACHE_LOCK:  # "old" was last used 40 s ago
        modelcache._CACHE[("old", "t")][2] = now - 40
    assert modelcache.settle(now=now) == [("old", "t")] and modelcache.held_names() == {("new", "t")}


def test_resident_bound_defaults_to_a_share_of_ram(monkeypatch) -> None:
    monkeypatch.delenv("EXPLORER_RESIDENT_MB", raising=False)
    monkeypatch.setenv("EXPLORER_MODEL_CACHE_MB", "100000")
    assert modelcache.resident_bytes() >= modelcache.MIN_RESIDENT_MB * 2**20
    monkeypatch.setenv("EXPLORER_MODEL_CACHE_MB", "100")
    assert modelcache.resident_bytes() == 100 * 2**20  # never above the cache's own bound
    monkeypatch.delenv("EXPLORER_IDLE_EVICT_S", raising=False)
    assert modelcache.idle_seconds() == 60.0
    monkeypatch.setenv("EXPLORER_IDLE_EVICT_S", "abc")  # a typo is a message, not the default in silence
    with pytest.raises(ExplorerError, match="EXPLORER_IDLE_EVICT_S='abc'"):
        modelcache.idle_seconds()


@pytest.fixture
def own_janitor_only():
    """The server's own janitor, started by any earlier test that stored a model, reads the module globals
    these tests patch (period, resident bound, _trim_malloc) and can evict the test's entry while the test's
    janitor is told a request runs (seen in a full-suite run). A held model slot is a running request to
    it, so it waits, and only the test's janitor acts."""
    from explorer.runtime import workers

    with workers.model_slot("the janitor tests"):
        yield


@pytest.mark.usefixtures("own_janitor_only")
def test_the_janitor_settles_when_no_request_runs(monkeypatch) -> None:
    import time

    monkeypatch.setattr(modelcache, "JANITOR_PERIOD_S", 0.05)
    monkeypatch.setenv("EXPLORER_RESIDENT_MB", "0")
    monkeypatch.setenv("EXPLORER_IDLE_EVICT_S", "0")
    busy = [True]
    t = threading.Thread(target=modelcache._janitor, args=(lambda: busy[0],), daemon=True)
    t.start()
    modelcache.store(("x", "t"), _entry(8, "x"))
    time.sleep(0.3)
    assert modelcache.held_names() == {("x", "t")}  # a request runs: nothing goes
    busy[0] = False
    deadline = time.monotonic() + 60  # patience on a loaded machine, not a timing
    while modelcache.held_names() and time.monotonic() < deadline:
        time.sleep(0.05)
    busy[0] = True  # the thread never ends: as if busy for ever, it touches nothing after this test
    assert modelcache.held_names() == set()


@pytest.mark.usefixtures("own_janitor_only")
def test_the_janitor_trims_for_a_while_after_requests_finish(monkeypatch) -> None:
    import time

    monkeypatch.setattr(modelcache, "JANITOR_PERIOD_S", 0.02)
    monkeypatch.setattr(modelcache, "QUIET_TRIMS", 3)
    trims: list[int] = []
    monkeypatch.setattr(modelcache, "_trim_malloc", lambda: trims.append(done[0]))
    done, over = [0], [False]
    t = threading.Thread(target=modelcache._janitor, args=(lambda: over[0], lambda: done[0]), daemon=True)
    t.start()
    time.sleep(0.2)
    assert trims == []  # nothing finished since the start: the janitor leaves memory alone
    done[0] = 1  # a request finished
    deadline = time.monotonic() + 60  # patience on a loaded machine, not a timing
    while len(trims) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    over[0] = True  # the thread never ends: as if busy for ever, it touches nothing after this test
    assert trims == [1, 1, 1]  # trimmed for QUIET_TRIMS periods after it, then quiet again
