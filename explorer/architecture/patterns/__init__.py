"""Sparse attention patterns: who may attend to whom, as boolean masks and closed-form costs.

One module per noun; the package names only the entry points (``patterns.X`` for :data:`__all__`: a spec, its mask,
its count and cost, a catalogued variant's pattern and curve, a table row); anything else is imported from its
module:

- :mod:`~explorer.architecture.patterns.kinds`: :class:`PatternSpec` and the six kinds (``full``, ``causal``,
  ``cross``, ``local_causal``, ``sliding_window``, ``block_sparse``).
- :mod:`~explorer.architecture.patterns.masks`: boolean masks ``(q_len, k_len)``, streamed in row chunks,
  max-pooled for drawing (:func:`mask_view`).
- :mod:`~explorer.architecture.patterns.counts`: closed-form non-zero counts (:func:`nnz_closed_form`).
- :mod:`~explorer.architecture.patterns.costs`: memory and FLOPs (:func:`pattern_stats`, :func:`cost_curve`).
- :mod:`~explorer.architecture.patterns.config`: a published config -> the spec of one layer.
- :mod:`~explorer.architecture.patterns.variants`: catalogued variants (:func:`pattern_for_variant`).
- :mod:`~explorer.architecture.patterns.table`: rows of the comparison table.

>>> from explorer.architecture import patterns
>>> from explorer.architecture.patterns import kinds, masks
>>> spec = kinds.sliding_window(4096, 512, (0,))
>>> patterns.nnz_closed_form(spec) == masks.nnz_from_mask(spec)
True
>>> patterns.pattern_stats(spec).density < 0.15
True
"""

from __future__ import annotations

from explorer.architecture.patterns.costs import pattern_stats
from explorer.architecture.patterns.counts import nnz_closed_form
from explorer.architecture.patterns.kinds import PatternSpec
from explorer.architecture.patterns.masks import build_mask, mask_view
from explorer.architecture.patterns.table import table_row
from explorer.architecture.patterns.variants import pattern_for_variant, variant_cost_curve

__all__ = ["PatternSpec", "build_mask", "mask_view", "nnz_closed_form", "pattern_for_variant", "pattern_stats",
           "table_row", "variant_cost_curve"]
