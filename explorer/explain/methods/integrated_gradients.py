"""Integrated gradients (captum), their steps chosen until complete: :data:`AUTO_STEPS` are tried in turn until the
scores sum to the difference within :data:`AUTO_GAP` (a contrast of two answers needed 64 steps where one answer
needed 16), each round only when it fits the request's time left; the steps used and the gap reached are said."""

from __future__ import annotations

import time

from explorer.core.notices import Notice
from explorer.explain.methods import Method, Scores, Work
from explorer.runtime import cancel

AUTO = "auto"
AUTO_STEPS = (16, 32, 64, 128, 256)  # each round about doubles the work: the last decides the time
AUTO_GAP = 0.01  # the completeness auto asks for: the scores sum to the difference within 1%


def _compute(work: Work) -> Scores:
    from explorer.explain import cost as costs  # torch: only when a method runs
    from explorer.explain import integrated

    loaded, frame = work.loaded, work.frame
    rounds = AUTO_STEPS if work.steps == AUTO else (int(work.steps),)
    done, used, notes = None, 0, []
    for n in rounds:
        plan = costs.estimate(loaded.model, frame, "ig", n, loaded.device)
        if done is not None and not cancel.room_for(plan.seconds or 0.0):
            notes.append(Notice("stopped", f"Integrated gradients stopped at {used} steps: {n} more would take "
                                           f"about {plan.seconds or 0:.0f} s, past this request's time left."))
            break
        began = time.perf_counter()
        done, used = integrated.integrated(loaded.model, frame, n, max(1, plan.rows // len(frame.rows))), n
        costs.record(plan, time.perf_counter() - began, loaded.device)
        if done.completeness <= AUTO_GAP:
            break
    assert done is not None
    if work.steps == AUTO:
        notes.append(_auto_notice(used, done.completeness))
    if done.baseline_output > done.output:
        notes.append(Notice("info", f"The baseline (the text's tokens replaced by padding) scores higher than the "
                                    f"text ({done.baseline_output:.3f} against {done.output:.3f}), so the scores sum "
                                    "to a negative number: a negative score is a token's share of that fall."))
    return list[float | None](done.scores), done.output, done.baseline_output, done.completeness, tuple(notes), used


def _auto_notice(used: int, gap: float) -> Notice:
    if gap <= AUTO_GAP:
        return Notice("info", f"Integrated gradients took {used} steps (auto): the scores sum to the difference "
                              f"within {gap:.2%}.")
    return Notice("fallback", f"Integrated gradients stopped at {used} steps (auto's cap, or the time left) with "
                              f"the scores {gap:.2%} away from the difference, more than the {AUTO_GAP:.0%} asked: "
                              "read them as approximate, or run it from the command line with more --steps.")


# 3 passes a step, plus 4 forwards: captum reads the input's and the baseline's embeddings, completeness scores both
METHOD = Method("ig", "integrated gradients", 2, signed=True, backward=True, anytime=False, stepped=True,
                served=False, typical_flops=60e9, passes=lambda shown, steps: 3.0 * steps + 4,
                copies=lambda shown, steps: steps, compute=_compute)
