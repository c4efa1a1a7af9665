"""explorer.architecture.patterns.table: plain rows of the comparison table."""

from __future__ import annotations

from explorer.architecture import patterns as P


def test_table_row_is_plain() -> None:
    row = P.table_row(P.pattern_for_variant("longformer", 1024))
    assert row["kind"] == "sliding-window" and row["non-zeros"] > 0 and "attention_window" in row["parameters"]
