"""explorer.evaluation.metrics: one record per metric drives the report, its table and the CLI's JSON; the Brier
score (one record) equals lm-evaluation-harness's own aggregation on the same log-likelihoods."""

from __future__ import annotations

import math

import numpy as np
import pytest
from lm_eval.api.metrics import brier_score  # the real lm-eval, installed beside our pins

from explorer.evaluation import metrics, report
from explorer.evaluation.result import ExampleScores, ModelRun
from explorer.evaluation.task import Example, Task
from explorer.plots.evaluation import summary_rows

EXAMPLES = tuple(Example(i, i + 2, "ctx", ("a", "bbbb", "cc"), i % 3) for i in range(5))
TASK = Task("toy", "choice", EXAMPLES, "toy.jsonl")
SCORES = [(-1.0, -5.0, -1.2), (-0.5, -0.7, -4.0), (-3.0, -2.0, -1.0), (-2.0, -2.0, -9.0), (-40.0, -0.1, -0.2)]


def _run(scores: list[tuple[float, ...]]) -> ModelRun:
    return ModelRun("m", "decoder", "test", "choice",
                    tuple(ExampleScores(i, s, (None,) * 3, (1, 1, 1)) for i, s in enumerate(scores)), len(scores))


def test_the_brier_score_is_lm_evals() -> None:
    expected = brier_score([(ex.answer, np.exp(s) / np.exp(s).sum()) for ex, s in zip(EXAMPLES, map(np.array, SCORES),
                                                                                       strict=True)])
    found = report.build(TASK, [_run(SCORES)]).summaries[0].measure("brier_score")
    assert found is not None and found.value == pytest.approx(float(expected), abs=1e-12)
    assert found.low is not None and found.high is not None and found.low <= found.value <= found.high
    assert not metrics.METRICS["brier_score"].higher_is_better


def test_a_confident_right_model_scores_near_zero_and_an_unscored_example_is_left_out() -> None:
    sure = [tuple(0.0 if c == ex.answer else -50.0 for c in range(3)) for ex in EXAMPLES]
    assert report.build(TASK, [_run(sure)]).summaries[0].measure("brier_score").value == pytest.approx(0, abs=1e-12)
    holed = [(-math.inf, -1.0, -2.0)] + SCORES[1:]
    measure = report.build(TASK, [_run(holed)]).summaries[0].measure("brier_score")
    assert measure is not None and measure.examples == 4


def test_every_metric_of_the_kind_reaches_the_table_and_the_json() -> None:
    rep = report.build(TASK, [_run(SCORES)])
    row = summary_rows(rep)[0]
    for metric in metrics.of_kind("choice"):
        assert metric.label in row
    assert [m.name for m in metrics.of_kind("cloze")] == ["acc", "perplexity"]
    assert rep.summaries[0].acc.correct == sum(int(np.argmax(s)) == ex.answer for s, ex in zip(SCORES, EXAMPLES,
                                                                                            strict=True))


def test_nothing_decided_is_nan_not_zero() -> None:
    rep = report.build(TASK, [_run([(-math.inf,) * 3] * 5)])
    assert math.isnan(rep.summaries[0].measure("brier_score").value)
    assert rep.summaries[0].acc.total == 0 and rep.summaries[0].acc.value == 0.0
