"""Timing in interleaved rounds: the order of calls and what is timed (no timings are asserted)."""

from __future__ import annotations

import itertools

from explorer.core import timing


def test_schedule_alternates_models_round_by_round():
    assert timing.schedule(2, 3) == [0, 1, 0, 1, 0, 1]
    assert timing.schedule(3, 1) == [0, 1, 2]


def test_interleaved_warms_up_then_alternates_and_times_each_call():
    calls: list[str] = []
    ticks = itertools.count()
    times = timing.interleaved([lambda: calls.append("a"), lambda: calls.append("b")], runs=3,
                               clock=lambda: float(next(ticks)))
    assert calls == ["a", "b", "a", "b", "a", "b", "a", "b"]  # one untimed warm-up each, then rounds
    assert times == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
