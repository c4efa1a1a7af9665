"""explorer.training.scheduler: the Lab's workers on a server: fair slots a closed tab gives up, the time budget,
the server-wide count left however a worker ends."""

from __future__ import annotations

from explorer.runtime.workers import FairSlots
from explorer.training import admission, corpus, scheduler
from explorer.training.scheduler import Job
from explorer.training.trainer import Plan

TEXT = "\n\n".join(f"The function number {i} returns a list of values from the module, and the loop reads it "
                   f"again in order {i % 7}." for i in range(200)).encode()


def test_the_server_caps_trainings_and_a_closed_tab_leaves_the_queue(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_LAB_TRAININGS", "1")
    slots = FairSlots()
    assert slots.wait_turn(scheduler.max_trainings, lambda: False)  # the one slot
    assert not slots.wait_turn(scheduler.max_trainings, lambda: True)  # a second waits until it gives up
    assert slots.running == 1 and slots.waiting() == 0
    slots.release()
    gone = Job(Plan("mlm"), label="#1 mlm (tiny, seed 0)", alive=lambda: False)
    scheduler.work(gone)  # the tab is gone before the job starts: it never builds
    assert gone.state == "stopped" and gone.run is None


def test_the_time_budget_stops_a_training_with_a_message(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_LAB_SECONDS", "1e-9")
    plan = Plan("mlm", steps=50, batch_tokens=256, seq_len=32, eval_windows=4)
    job = Job(plan, corpus.from_bytes(TEXT, "notes.txt"), label="#1 mlm (tiny, seed 0)")
    scheduler.work(job)
    assert job.state == "stopped" and job.run is not None and job.run.step < 50
    assert "python -m explorer" in (job.note or "")  # the CLI has no limit


def test_a_finished_worker_leaves_the_server_wide_count(monkeypatch) -> None:
    monkeypatch.setattr(admission.GATE, "active", 1)
    gone = Job(Plan("mlm"), label="#1 mlm (tiny, seed 0)", alive=lambda: False)
    scheduler.work(gone)  # never started (the tab closed while it waited): still leaves
    assert gone.state == "stopped" and admission.GATE.active == 0


def test_quick_mode_gives_every_plan_the_tests_small_steps(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_LAB_QUICK", "1")
    plans = scheduler.plans(["mlm", "roberta"], "tiny", 10, 0, "cpu", 2048, 128)
    assert [(p.objective, p.batch_tokens, p.seq_len) for p in plans] == [("mlm", 256, 32), ("roberta", 256, 32)]
    assert scheduler.specs() == (scheduler.QUICK_PROBE, scheduler.QUICK_EXITS)
