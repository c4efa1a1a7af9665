"""explorer.training.session: one lifecycle for the Lab and the CLI, stages in one order, stop and resume without
rebuilding, a model that cannot have exits stays done, and one record shape."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.training import checkpoint, trainer
from explorer.training.scheduler import QUICK_EXITS, QUICK_PROBE
from explorer.training.session import Hooks, Session
from explorer.training.trainer import Plan

TINY = {"batch_tokens": 256, "seq_len": 32, "eval_windows": 4}


def test_every_stage_runs_once_in_the_one_order_and_the_record_says_so(tmp_path) -> None:
    seen: list[str] = []
    session = Session(Plan("mlm", steps=3, **TINY), probe_spec=QUICK_PROBE, exit_spec=QUICK_EXITS)
    session.execute(Hooks(state=lambda s: seen.append(s.state)), save_to=tmp_path / "run")
    assert seen == ["building", "training", "saving", "probing", "exits", "saving"] and session.state == "done"
    assert session.saved == tmp_path / "run" and checkpoint.has_exits(session.saved)
    out = session.record().to_dict()
    assert out["steps"] == 3 and out["out"] == str(tmp_path / "run") and 0 <= out["eval"]["probe"]["accuracy"] <= 1
    assert out["exits"]["task"] and out["corpus"]["words"] > 0
    assert session.record(corpus=False).to_dict()["corpus"] is None  # the Lab's redraws skip the counting
    assert checkpoint.load_card(session.saved)["steps"] == 3  # lab.json is the same record


def test_a_stopped_session_resumes_where_it_stopped_without_building_again(monkeypatch) -> None:
    built: list[Plan] = []
    start = trainer.start
    monkeypatch.setattr(trainer, "start", lambda plan, *a, **k: built.append(plan) or start(plan, *a, **k))
    session = Session(Plan("mlm", steps=6, **TINY))
    stop_after = {"steps": 2}
    hooks = Hooks(should_stop=lambda: session.run is not None and session.run.step >= stop_after["steps"])
    session.execute(hooks)
    assert session.state == "stopped" and session.run is not None and session.run.step == 2
    stop_after["steps"] = 10**6
    session.execute(hooks)
    assert session.state == "done" and session.run.step == 6 and len(built) == 1


def test_a_model_without_layers_to_exit_from_stays_done_and_says_why(tmp_path) -> None:
    session = Session(Plan("distilbert", steps=2, **TINY), exit_spec=QUICK_EXITS)
    session.execute(save_to=tmp_path / "student")
    assert session.state == "done" and session.exits is None and "at least two layers" in (session.exits_error or "")
    assert not checkpoint.has_exits(tmp_path / "student")


def test_nothing_to_save_before_a_step_is_trained(tmp_path) -> None:
    with pytest.raises(ExplorerError, match="train at least one step"):
        Session(Plan("mlm", **TINY)).save(tmp_path / "x")
