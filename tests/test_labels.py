"""explorer.core.labels: the one home of token axis labels (escaped, unique by position)."""

from __future__ import annotations

from explorer.core.labels import token_labels


def test_token_labels_are_unique_and_escaped() -> None:
    labels = token_labels(["the", "<script>", "the", "&"])
    assert labels == ["0 the", "1 &lt;script&gt;", "2 the", "3 &amp;"]
    assert len(set(labels)) == 4  # plotly would merge equal categories into one row


def test_token_labels_count_from_the_window_start() -> None:
    assert token_labels(["a", "b"], offset=510) == ["510 a", "511 b"]
    assert token_labels([]) == []
