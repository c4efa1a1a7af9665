"""Repetition measures: repeated n-gram share and distinct-2, for every prefix length."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from explorer.tasks.generation.repetition import distinct_n, repeated_share, repetition_curve


def test_a_loop_is_repetitive_and_fresh_text_is_not() -> None:
    assert repeated_share([1, 2, 3, 4, 5, 6]) == 0.0 and distinct_n([1, 2, 3, 4, 5, 6]) == 1.0
    loop = [7, 8] * 10
    assert repeated_share(loop) > 0.8 and distinct_n(loop) < 0.15


def test_short_sequences_have_neutral_values() -> None:
    assert repeated_share([1, 2]) == 0.0 and distinct_n([1]) == 1.0
    assert repetition_curve([]) == []


@given(st.lists(st.integers(0, 5), max_size=40))
def test_curve_end_equals_the_direct_measures(ids: list[int]) -> None:
    curve = repetition_curve(ids)
    assert [p.length for p in curve] == list(range(1, len(ids) + 1))
    if ids:
        assert abs(curve[-1].repeated - repeated_share(ids)) < 1e-6
        assert abs(curve[-1].distinct_2 - distinct_n(ids, 2)) < 1e-6
    assert all(0 <= p.repeated <= 1 and 0 <= p.distinct_2 <= 1 for p in curve)
