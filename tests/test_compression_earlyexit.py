"""explorer.compression.earlyexit: a lab model's FastBERT exits measured like a compression method.

The original row is the full model (its accuracy is the teacher's accuracy the lab recorded); each exit-S row
runs fewer layers on average as S grows, answers with the accuracy decide() gives, adds the classifiers' bytes,
and is timed; exit-S cannot share a study with copies, and a model without exits says how to get them."""

from __future__ import annotations

import json

import pytest

from explorer.compression import methods, study
from explorer.core.errors import ExplorerError
from explorer.training import checkpoint

KEY = "lab/mlm-tiny-20steps-seed0"


@pytest.fixture(scope="module")
def result(lab_exits) -> study.Study:
    return study.run(KEY, ["exit-0.3", "exit-1"], device="cpu", models_dir=str(lab_exits), repeats=1,
                     prompt="<b>The tutorial</b> walks you through classes ünïcode 🐍")


def test_the_original_is_the_full_model_with_the_teachers_accuracy(result, lab_exits) -> None:
    card = json.loads((lab_exits / KEY / checkpoint.EXITS / "exits.json").read_text(encoding="utf-8"))
    b = result.baseline
    assert b.method == "original" and b.quality.value == pytest.approx(card["teacher_accuracy"], abs=1e-4)
    assert b.quality.extra["mean_layers"] == 2 and b.latency_ms > 0
    assert "layer 2 of 2" in b.answer


def test_each_speed_runs_fewer_layers_and_is_measured(result) -> None:
    r03, r1 = result.rows
    assert (r03.method, r1.method) == ("exit-0.3", "exit-1")
    mean = r1.quality.extra["mean_layers"]  # at S = 1 only an exact coin toss (uncertainty 1.0) goes on
    assert 1.0 <= mean < 1.1 and r1.quality.extra["layer_speedup"] == pytest.approx(2.0 / mean, abs=1e-5)
    assert mean <= r03.quality.extra["mean_layers"] <= 2.0
    for r in result.rows:
        assert 0.0 <= r.quality.value <= 1.0 and r.quality.baseline_value == result.baseline.quality.value
        assert r.size_bytes > result.baseline.size_bytes  # the students' classifiers are extra bytes
        assert r.latency_ms > 0 and r.baseline_latency_ms > 0 and "layer" in r.answer
    assert result.prompt.startswith("<b>The tutorial</b>")  # kept as typed; the page escapes it
    assert any("compute, not bytes" in n.text for n in result.notices)


def test_records_keep_the_cli_shape(result) -> None:
    rec = result.records()[0]
    assert {"model", "method", "size_bytes", "baseline_size_bytes", "latency_ms", "baseline_latency_ms", "quality",
            "device"} <= rec.keys()
    assert rec["quality"]["metric"].startswith("accuracy on") and "mean_layers" in rec["quality"]


def test_exit_cannot_share_a_study_with_copies(lab_exits) -> None:
    with pytest.raises(ExplorerError, match="apart from the other methods"):
        study.run(KEY, ["exit-0.3", "int8"], device="cpu", models_dir=str(lab_exits))


def test_a_model_without_exits_says_how_to_get_them(lab_exits, tmp_path) -> None:
    with pytest.raises(ExplorerError, match="Pretraining lab"):
        study.run("sentence-bert", ["exit-0.3"], device="cpu")
    with pytest.raises(ExplorerError, match="pretrain"):
        study.run("lab/no-such-run", ["exit-0.3"], device="cpu", models_dir=str(lab_exits))


def test_exit_is_not_a_copy() -> None:
    import torch

    with pytest.raises(ExplorerError, match="does not make a copy"):
        methods.apply(torch.nn.Linear(2, 2), methods.parse("exit-0.5"), "cpu")


def test_an_empty_passage_is_said_and_the_example_answers(lab_exits) -> None:
    from explorer.compression.earlyexit import DEFAULT_PASSAGE

    s = study.run(KEY, ["exit-1"], device="cpu", models_dir=str(lab_exits), repeats=1, prompt="   ")
    assert s.prompt == DEFAULT_PASSAGE and s.rows[0].answer
    assert [n.kind for n in s.notices][0] == "fallback" and "example" in s.notices[0].text
