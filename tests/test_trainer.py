"""The trainer: the loss goes down, a seed repeats a run, stop and resume equal one run, bad plans are refused."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.training import record, trainer

TINY = {"steps": 30, "batch_tokens": 512, "seq_len": 32, "eval_windows": 8, "eval_every": 15}


def test_the_held_out_loss_goes_down_in_thirty_tiny_steps() -> None:
    run = trainer.advance(trainer.start(trainer.Plan("mlm", **TINY)))
    first, last = run.evals[0], run.evals[-1]
    assert run.step == 30 and last["loss"] < first["loss"] - 1.0
    assert run.tokens_seen >= 30 * 512 and run.flops == pytest.approx(run.flops_per_token * run.tokens_seen)


def test_a_seed_gives_the_same_run_and_stop_resume_equals_one_run() -> None:
    one = trainer.advance(trainer.start(trainer.Plan("albert", **TINY)), until=12)
    again = trainer.start(trainer.Plan("albert", **TINY))
    stops = iter([False] * 5 + [True])
    trainer.advance(again, until=12, should_stop=lambda: next(stops))
    assert again.step == 5
    trainer.advance(again, until=12)
    assert [round(v, 5) for _, v in again.losses] == [round(v, 5) for _, v in one.losses]


def test_progress_reports_every_step_and_the_summary_has_the_cli_keys() -> None:
    seen: list[trainer.Progress] = []
    run = trainer.advance(trainer.start(trainer.Plan("mlm", **{**TINY, "steps": 4})), on_progress=seen.append)
    assert [p.step for p in seen] == [1, 2, 3, 4] and seen[-1].eval is not None
    out = record.of(run.plan, run).to_dict()
    keys = {"objective", "size", "params", "steps", "tokens_seen", "flops", "seconds", "losses", "eval", "out"}
    assert keys <= set(out)


@pytest.mark.parametrize(("change", "message"), [
    ({"steps": 0}, "Steps must be"), ({"steps": -1}, "Steps must be"), ({"steps": 10**9}, "Steps must be"),
    ({"seq_len": 4}, "Sequence length"), ({"batch_tokens": 8}, "Tokens per step"), ({"seed": -2}, "seed"),
    ({"size": "giant"}, "Unknown size"), ({"objective": "bogus"}, "Unknown objective"),
])
def test_bad_plans_are_refused_before_anything_is_built(change: dict, message: str) -> None:
    plan = trainer.Plan(**{"objective": "mlm", **change})
    with pytest.raises(ExplorerError, match=message):
        trainer.start(plan)


def test_a_distilbert_teacher_trained_first_reports_progress_and_can_be_stopped() -> None:
    plan = trainer.Plan("distilbert", **{**TINY, "steps": 3})
    seen: list[int] = []
    run = trainer.start(plan, on_progress=lambda p: seen.append(p.step))
    assert seen == [1, 2, 3] and run.step == 0  # the teacher's steps; the student has not started
    with pytest.raises(ExplorerError, match="teacher was training"):
        trainer.start(plan, should_stop=lambda: True)


def test_evaluation_reports_the_comparable_language_model_part() -> None:
    run = trainer.start(trainer.Plan("electra", **{**TINY, "steps": 2}))
    e = trainer.evaluate(run)
    assert e["loss"] > e["lm_loss"] + 20 > 20  # MLM + 50 x RTD (50 x ~0.69 untrained) against the MLM part alone
    assert 0 <= e["lm_accuracy"] < 0.2 < e["accuracy"]  # an untrained generator against a discriminator's "original"
    gpt = trainer.evaluate(trainer.start(trainer.Plan("gpt", **{**TINY, "steps": 2})))
    assert gpt["lm_loss"] == pytest.approx(gpt["loss"]) and gpt["lm_accuracy"] == pytest.approx(gpt["accuracy"])
