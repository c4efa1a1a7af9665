"""Reports: accuracy and acc_norm as lm-eval decides them, Wilson's interval, the paired bootstrap, rows with the
disagreements first, slices by a field and by length, a run stopped early; and the CLI's JSON shape."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice
from explorer.evaluation import interval, report, slices
from explorer.evaluation.result import ExampleScores, ModelRun
from explorer.evaluation.task import Example, Task

EXAMPLES = tuple(Example(i, i + 2, "c" * (10 * (i + 1)), ("a", "bbbb", "cc"), i % 3,
                         (("topic", "odd" if i % 2 else "even"), ("n", i))) for i in range(6))
TASK = Task("toy", "choice", EXAMPLES, "toy.jsonl")


def _run(name: str, scores: list[tuple[float, float, float]], total: int = 6) -> ModelRun:
    return ModelRun(name, "decoder", "test", "choice",
                    tuple(ExampleScores(i, s, (None,) * 3, (1, 1, 1)) for i, s in enumerate(scores)), total)


def test_wilson_matches_the_formula_and_stays_within_0_and_1() -> None:
    z = interval.Z
    for k, n in [(0, 10), (10, 10), (7, 20), (1, 3)]:
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        assert interval.wilson(k, n) == pytest.approx((max(0.0, centre - half), min(1.0, centre + half)))
    assert interval.wilson(0, 10)[0] == 0.0 and interval.wilson(10, 10)[1] == pytest.approx(1.0)
    assert interval.wilson(0, 10)[1] > 0.2  # nothing right out of ten is not "surely zero"


def test_the_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    values = [1, 1, 0, 1, 0, 1, 1, 1, 0, 1]
    assert interval.bootstrap(values, seed=3) == interval.bootstrap(values, seed=3)
    low, high = interval.bootstrap(values)
    assert low < np.mean(values) < high
    diff, low, high = interval.paired_difference([True] * 10, [False] * 10)
    assert (diff, low, high) == (1.0, 1.0, 1.0)


def test_acc_and_acc_norm_are_lm_evals_rules() -> None:
    # choices "a", "bbbb", "cc": lm-eval's acc_norm divides each sum by the choice's length in characters
    run = _run("m", [(-1.0, -5.0, -1.2)] + [(-1.0, -2.0, -3.0)] * 5)
    assert run.choice(0) == 0 and run.norm_choice(0, EXAMPLES[0].choices) == 2  # -1.2 / 2 beats -1.0 / 1
    assert run.norm_choice(1, EXAMPLES[1].choices) == 1  # -2.0 / 4 beats -1.0 / 1
    rep = report.build(TASK, [run])  # answers 0, 1, 2, 0, 1, 2
    assert rep.summaries[0].acc.correct == 2  # examples 0 and 3 pick "a"
    assert rep.summaries[0].acc_norm.correct == 2  # examples 1 and 4 pick "bbbb" per character


def test_disagreements_come_first_and_unscored_examples_are_said() -> None:
    a = _run("a", [(-1.0, -2.0, -3.0)] * 6)
    b = _run("b", [(-1.0, -2.0, -3.0)] * 2 + [(-3.0, -2.0, -1.0)] * 2, total=6)  # stopped after 4
    rep = report.build(TASK, [a, b])
    assert [r.index for r in rep.rows] == [2, 3, 0, 1, 4, 5]  # examples 2 and 3: a picks "a", b picks "cc"
    assert [r.index for r in rep.rows if r.disagree] == [2, 3]
    assert rep.rows[-1].picks[1].choice is None and rep.rows[-1].picks[1].correct is None
    assert rep.summaries[1].scored == 4 and rep.summaries[1].total == 6
    assert rep.differences[0].examples == 4  # only the examples both scored are compared


def test_slices_by_a_field_and_by_length() -> None:
    rep = report.build(TASK, [_run("a", [(-1.0, -2.0, -3.0)] * 6)])
    by_topic = slices.slices(rep, TASK, "topic")
    assert [(s.value, s.examples) for s in by_topic] == [("even", 3), ("odd", 3)]
    assert dict(by_topic[0].accuracy)["a"].correct == 1  # examples 0, 2, 4: answers 0, 2, 1: only 0 is right
    by_length = slices.slices(rep, TASK, slices.LENGTH)
    assert [s.value for s in by_length] == ["10-20 characters", "30-40 characters", "50-60 characters"]
    with pytest.raises(ExplorerError, match="No example has the field 'nope'"):
        slices.slices(rep, TASK, "nope")


def test_a_numeric_field_with_many_values_is_cut_into_thirds() -> None:
    many = tuple(Example(i, i + 1, "c", ("a", "b"), 0, (("score", i * 1.5),)) for i in range(30))
    groups = slices.groups(many, "score")
    assert len(groups) == 3 and sum(len(g.indices) for g in groups) == 30


def test_cloze_accuracy_is_the_greedy_match_and_perplexity_is_of_the_right_continuations() -> None:
    task = Task("c", "cloze", tuple(Example(i, i + 1, "x", (" y",), 0, (), "cloze") for i in range(3)), "c.jsonl")
    run = ModelRun("m", "decoder", "test", "cloze", tuple(
        ExampleScores(i, (-float(i + 1),), (i != 1,), (2,)) for i in range(3)), 3,
        notices=(Notice("info", "said"),))
    rep = report.build(task, [run])
    assert rep.summaries[0].acc.correct == 2 and rep.summaries[0].acc_norm is None
    assert rep.summaries[0].perplexity == pytest.approx(math.exp(6 / 6))
    assert [n.text for n in rep.notices] == ["said"]
    js = run.to_dict(task)
    assert js["examples"][1] == {"index": 1, "line": 2, "choice": 0, "correct": False, "scores": [-2.0],
                                 "tokens": [2]}
