"""Rows of the patterns comparison table: one flat dict of plain values per drawn pattern.

>>> from explorer.architecture.patterns.variants import pattern_for_variant
>>> row = table_row(pattern_for_variant("gpt2", 1024))
>>> row["kind"], row["non-zeros"], row["max positions"]
('causal', 524800, 1024)
"""

from __future__ import annotations

from explorer.architecture.patterns.variants import VariantPattern

__all__ = ["table_row"]


def table_row(vp: VariantPattern, nnz_counted: int | None = None) -> dict[str, object]:
    """One row of the comparison table (plain types, readable column names).

    ``nnz_counted``: the count taken on the mask itself, shown next to the closed form.
    """
    s = vp.stats
    counted = {} if nnz_counted is None else {"non-zeros counted on the mask": nnz_counted}
    return {
        "variant": vp.name, "key": vp.key, "part": vp.part, "layer": vp.layer, "layer kind": vp.layer_kind,
        "kind": s.effective_kind, "queries": s.q_len, "keys": s.k_len, "non-zeros": s.nnz, **counted,
        "density": round(s.density, 6), "score memory (MiB, sparse)": round(s.score_memory_bytes / 2**20, 3),
        "score memory (MiB, dense)": round(s.dense_score_memory_bytes / 2**20, 3),
        "GFLOPs": round(s.flops / 1e9, 4), "max positions": vp.max_positions,
        "parameters": s.note,
    }
