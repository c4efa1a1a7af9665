"""Figures of the pretraining lab from a small fake history: traces per run, axis titles, no NaN drawn, the table."""

from __future__ import annotations

import math

import pytest

from explorer.plots import training as plots


def _run(objective: str, scale: float, *, accuracy: bool = True, steps: int = 4) -> dict:
    evals = [{"step": s, "loss": 9.0 - scale * s, "flops": 1e9 * s, "seconds": 0.5 * s, "tokens_seen": 256 * s,
              **({"accuracy": 0.02 * s} if accuracy else {})} for s in range(0, steps + 1, 2)]
    return {"objective": objective, "size": "tiny", "params": 1_500_000, "steps": steps, "tokens_seen": 256 * steps,
            "flops": 1e9 * steps, "seconds": 0.5 * steps,
            "losses": [[s, 9.2 - scale * s] for s in range(1, steps + 1)], "eval": {"history": evals}}


RUNS = {"#1 mlm (tiny, seed 0)": _run("mlm", 0.3), "#2 <b>x</b>": _run("gpt", 0.2, accuracy=False)}


def _no_nan(fig) -> None:
    for trace in fig.data:
        for axis in (trace.x, trace.y):
            assert axis is not None and all(math.isfinite(v) for v in axis)


def test_loss_figure_has_a_line_per_run_and_escapes_labels() -> None:
    fig = plots.loss_figure(RUNS)
    assert [len(t.x) for t in fig.data] == [4, 4]
    assert fig.data[0].name == "#1 mlm (tiny, seed 0)" and "<b>" not in fig.data[1].name
    assert fig.layout.xaxis.title.text == "step" and "training loss" in fig.layout.yaxis.title.text
    assert fig.data[0].line.color != fig.data[1].line.color
    _no_nan(fig)


def test_heldout_figure_shares_one_loss_axis_across_compute_and_time() -> None:
    fig = plots.heldout_figure(RUNS)
    assert len(fig.data) == 4  # two runs x (FLOPs, seconds)
    by_flops, by_time = fig.data[0], fig.data[1]
    assert list(by_flops.x) == [0.0, 2e9, 4e9] and list(by_time.x) == [0.0, 1.0, 2.0]
    assert list(by_flops.y) == list(by_time.y)  # the same evaluations on both axes
    assert "FLOPs" in fig.layout.xaxis.title.text and "seconds" in fig.layout.xaxis2.title.text
    assert "held-out LM cross-entropy" in fig.layout.yaxis.title.text
    assert [t.showlegend for t in fig.data] == [True, False, True, False]  # one legend entry per run
    assert fig.data[0].line.color == fig.data[1].line.color  # a run keeps its colour
    _no_nan(fig)


def test_accuracy_figure_draws_only_runs_that_report_one() -> None:
    fig = plots.accuracy_figure(RUNS)
    assert [t.name for t in fig.data] == ["#1 mlm (tiny, seed 0)"]
    assert list(fig.data[0].y) == pytest.approx([0.0, 0.04, 0.08])
    assert fig.layout.yaxis.title.text == "accuracy" and fig.layout.xaxis.title.text == "training FLOPs"
    none = plots.accuracy_figure({"gpt": _run("gpt", 0.1, accuracy=False)})
    assert not none.data and "No run reports" in none.layout.annotations[0].text


def test_a_diverged_step_is_left_out_not_drawn_as_nan() -> None:
    run = _run("mlm", 0.3)
    run["losses"][1][1] = float("nan")
    run["eval"]["history"][1]["loss"] = float("inf")
    fig = plots.loss_figure({"r": run})
    assert list(fig.data[0].x) == [1, 3, 4]
    _no_nan(fig)
    _no_nan(plots.heldout_figure({"r": run}))


def test_empty_and_fresh_runs_draw_a_hint_not_an_error() -> None:
    for builder in (plots.loss_figure, plots.heldout_figure, plots.accuracy_figure):
        assert builder({}).layout.annotations  # "No runs yet"
    fresh = {"objective": "mlm", "losses": [], "eval": {"history": []}}
    assert [len(t.x) for t in plots.loss_figure({"new": fresh}).data] == [0]
    assert plots.table_rows({"new": fresh})[0]["held-out loss"] == "—"


def test_table_rows_say_first_to_last() -> None:
    rows = plots.table_rows(RUNS)
    assert [r["objective"] for r in rows] == ["mlm", "gpt"]
    first = rows[0]
    assert first["held-out loss"] == "9 → 7.8" and first["accuracy"] == "0.0% → 8.0%"
    assert rows[1]["accuracy"] == "—"
    assert {"parameters", "steps", "tokens seen", "FLOPs", "seconds"} <= set(first)
    assert first["FLOPs"] == "4e+09" and first["tokens seen"] == 1024


def test_the_language_model_part_is_plotted_where_an_objective_adds_other_terms() -> None:
    """ELECTRA's own loss is MLM + 50 x RTD (~30) and its own accuracy the discriminator's (~85%, mostly
    'original'): the figures and the table show its generator's cross-entropy and accuracy instead."""
    electra = {"objective": "electra", "eval": {"history": [
        {"step": 0, "loss": 43.0, "lm_loss": 9.0, "accuracy": 0.82, "lm_accuracy": 0.0, "flops": 0.0, "seconds": 0.0},
        {"step": 5, "loss": 27.0, "lm_loss": 6.5, "accuracy": 0.85, "lm_accuracy": 0.05, "flops": 1e9,
         "seconds": 1.0}]}}
    assert list(plots.heldout_figure({"e": electra}).data[0].y) == [9.0, 6.5]
    assert list(plots.accuracy_figure({"e": electra}).data[0].y) == [0.0, 0.05]
    row = plots.table_rows({"e": electra})[0]
    assert row["held-out loss"].startswith("9") and row["accuracy"].startswith("0.0%")
