"""explorer.runtime.workers: at most N model jobs at once, FIFO order, busy message after the timeout, re-entrant."""

from __future__ import annotations

import threading
import time

import pytest

from explorer.core.errors import ExplorerError
from explorer.runtime import workers


def _run_jobs(n_jobs: int, together: int = 1) -> tuple[int, list[int]]:
    """``n_jobs`` jobs, each started once the one before it holds a slot or waits for one (arrival order by
    events, not sleeps); the first holds its slot until every job has arrived, so the others queue; with
    ``together`` > 1 the jobs inside meet at a barrier of that many, so they provably run at once (a wrong limit
    breaks the barrier instead of passing by luck)."""
    peak, order, lock = [0], [], threading.Lock()
    meet = threading.Barrier(together, timeout=60) if together > 1 else None
    arrived = threading.Event()

    def job(i: int) -> None:
        with workers.model_slot(f"job {i}"):
            with lock:
                order.append(i)
                peak[0] = max(peak[0], workers.stats()["running"])
            if i == 0 and together == 1:
                arrived.wait(60)
            if meet is not None:
                meet.wait()

    threads = []
    for i in range(n_jobs):
        threads.append(threading.Thread(target=job, args=(i,)))
        threads[-1].start()
        deadline = time.monotonic() + 60
        while len(order) + workers._SLOTS.waiting() < i + 1:  # job i has a slot or a place in the queue
            assert time.monotonic() < deadline, f"job {i} never arrived"
            time.sleep(0.001)
    arrived.set()
    for t in threads:
        t.join()
    return peak[0], order


def test_one_slot_serialises_in_arrival_order(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_WORKERS", "1")
    peak, order = _run_jobs(5)
    assert peak == 1 and order == [0, 1, 2, 3, 4]


def test_two_slots_run_two_at_once(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_WORKERS", "2")
    peak, _ = _run_jobs(4, together=2)
    assert peak == 2


def _hold_the_slot(seconds: float) -> threading.Thread:
    """Another thread takes the model slot for ``seconds``; returns once it holds it."""
    started = threading.Event()

    def hog() -> None:
        with workers.model_slot():
            started.set()
            time.sleep(seconds)

    t = threading.Thread(target=hog)
    t.start()
    started.wait()
    return t


def test_waiting_too_long_is_a_busy_message(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_WORKERS", "1")
    t = _hold_the_slot(0.5)
    with pytest.raises(ExplorerError, match="busy"), workers.model_slot(timeout=0.05):
        pass
    t.join()
    assert workers.stats()["running"] == 0


def test_reentrant_within_a_thread(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_WORKERS", "1")
    with workers.model_slot(timeout=0.1), workers.model_slot(timeout=0.1):
        assert workers.stats()["running"] == 1
    assert workers.stats()["running"] == 0


def test_limit_reads_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_WORKERS", "3")
    assert workers.limit() == 3
    monkeypatch.setenv("EXPLORER_MODEL_WORKERS", " ")  # blank is unset: from the hardware
    assert workers.limit() >= 1
    for bad in ("zero", "0", "1.5"):  # a typo is a message naming the variable, never the default in silence
        monkeypatch.setenv("EXPLORER_MODEL_WORKERS", bad)
        with pytest.raises(ExplorerError, match=f"EXPLORER_MODEL_WORKERS='{bad}' .* from 1 to 1,024"):
            workers.limit()


def test_a_queued_request_says_how_long_it_waited_and_behind_how_many(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_WORKERS", "1")
    monkeypatch.setattr(workers, "NOTICE_AFTER_S", 0.2)
    notes = []

    @workers.queued
    def light() -> str:
        return "done"

    t = _hold_the_slot(0.5)
    assert light() == "done"
    notes.append(workers.take_wait_notice())
    t.join()
    assert notes[0] is not None and "behind 1 other request " in notes[0] and notes[0].startswith("Waited ")
    assert workers.take_wait_notice() is None  # said once
    light()
    assert workers.take_wait_notice() is None  # no wait, no sentence


def test_busy_message_says_behind_how_many(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MODEL_WORKERS", "1")
    t = _hold_the_slot(0.4)
    with pytest.raises(ExplorerError, match="behind 1 other request"), workers.model_slot(timeout=0.05):
        pass
    t.join()


def test_queued_runs_under_a_token_with_the_apps_probe(monkeypatch) -> None:
    from explorer.runtime import cancel

    monkeypatch.setenv("EXPLORER_REQUEST_SECONDS", "30")
    alive = [True]
    workers.set_probe(lambda: lambda: alive[0])
    try:
        @workers.queued
        def job() -> tuple[float, bool]:
            token = cancel.current()
            assert token is not None
            cancel.check()
            alive[0] = False  # the tab closes mid-request
            try:
                cancel.check()
            except cancel.RequestStopped:
                return token.budget.seconds, True
            return token.budget.seconds, False

        assert job() == (30.0, True)
        assert cancel.current() is None and workers.stats()["running"] == 0  # the worker is free again
    finally:
        workers.set_probe(None)


def test_a_stopped_request_frees_its_worker_for_the_next(monkeypatch) -> None:
    from explorer.runtime import cancel

    monkeypatch.setenv("EXPLORER_MODEL_WORKERS", "1")
    monkeypatch.setenv("EXPLORER_REQUEST_SECONDS", "0.3")

    @workers.queued
    def runaway() -> None:
        while True:  # a loop that checks its token every step, as the decoders do
            cancel.check()
            time.sleep(0.01)

    @workers.queued
    def light() -> str:
        return "served"

    errors: list[BaseException] = []

    def run_runaway() -> None:
        try:
            runaway()
        except cancel.RequestStopped as err:
            errors.append(err)

    t = threading.Thread(target=run_runaway)
    t.start()
    time.sleep(0.05)
    assert light() == "served"  # served once the runaway's budget stopped it
    t.join()
    assert len(errors) == 1 and errors[0].reason == "time"
