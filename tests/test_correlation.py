"""explorer.core.correlation: Spearman against the textbook formula (no ties) and ties at their average rank."""

from __future__ import annotations

import pytest

from explorer.core import correlation


def test_spearman_against_the_textbook_formula() -> None:
    a, b = [0.1, 0.5, 0.3, 0.9, 0.7], [1.0, 3.0, 2.0, 4.0, 5.0]
    ra, rb = [0, 2, 1, 4, 3], [0, 2, 1, 3, 4]
    d2 = sum((x - y) ** 2 for x, y in zip(ra, rb, strict=True))
    assert correlation.spearman(a, b) == pytest.approx(1 - 6 * d2 / (5 * (25 - 1)))
    assert correlation.spearman(a, [-x for x in a]) == pytest.approx(-1.0)


def test_ties_share_their_average_rank_and_a_constant_list_correlates_zero() -> None:
    assert correlation.average_ranks([2.0, 1.0, 2.0, 2.0]) == [2.0, 0.0, 2.0, 2.0]
    assert correlation.spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) == 0.0
