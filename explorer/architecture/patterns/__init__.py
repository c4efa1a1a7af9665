"""Sparse attention patterns: who may attend to whom, as boolean masks and closed-form costs.

One module per noun; this package re-exports the public API, so ``patterns.X`` works for all of them:

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
>>> spec = patterns.sliding_window(4096, 512, (0,))
>>> patterns.nnz_closed_form(spec) == patterns.nnz_from_mask(spec)
True
>>> patterns.pattern_stats(spec).density < 0.15
True
"""

from __future__ import annotations

from explorer.architecture.patterns.config import (
    KNOWN_ATTENTION,
    alternating_layers,
    head_dim,
    max_positions,
    self_attention_spec,
)
from explorer.architecture.patterns.costs import (
    FP32_BYTES,
    CostCurve,
    PatternStats,
    cost_curve,
    default_lengths,
    describe,
    pattern_stats,
)
from explorer.architecture.patterns.counts import nnz_block_sparse, nnz_closed_form, nnz_sliding_window
from explorer.architecture.patterns.kinds import (
    KINDS,
    MAX_LEN,
    PatternSpec,
    block_sparse,
    causal,
    cross,
    effective_kind,
    full,
    local_causal,
    sliding_window,
)
from explorer.architecture.patterns.masks import (
    CHUNK_CELLS,
    MaskView,
    bigbird_block_layout,
    bigbird_random_blocks,
    build_mask,
    iter_mask_chunks,
    mask_rows,
    mask_view,
    nnz_from_mask,
    pooled_mask,
)
from explorer.architecture.patterns.table import table_row
from explorer.architecture.patterns.variants import (
    ENCODER_DECODER_PARTS,
    PARTS,
    VariantPattern,
    diagram_plan,
    layer_count,
    pattern_for_variant,
    supported_variants,
    variant_cost_curve,
    variant_layers,
)

__all__ = [
    "CHUNK_CELLS", "ENCODER_DECODER_PARTS", "FP32_BYTES", "KINDS", "KNOWN_ATTENTION", "MAX_LEN", "PARTS",
    "CostCurve", "MaskView", "PatternSpec", "PatternStats", "VariantPattern",
    "alternating_layers", "bigbird_block_layout", "bigbird_random_blocks", "block_sparse", "build_mask",
    "causal", "cost_curve", "cross", "default_lengths", "describe", "diagram_plan", "effective_kind",
    "full", "head_dim", "iter_mask_chunks", "layer_count", "local_causal", "mask_rows", "mask_view",
    "max_positions", "nnz_block_sparse", "nnz_closed_form", "nnz_from_mask", "nnz_sliding_window",
    "pattern_for_variant", "pattern_stats", "pooled_mask", "self_attention_spec",
    "sliding_window", "supported_variants", "table_row", "variant_cost_curve",
    "variant_layers",
]
