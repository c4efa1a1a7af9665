"""Cached wrappers of the patterns area (the page calls these for everything that computes).

Everything here is pure computation on configs (no model is loaded), so ``st.cache_data``
with hashable arguments; returned objects are frozen dataclasses and numpy arrays.
"""

from __future__ import annotations

import streamlit as st

from explorer.architecture import patterns
from explorer.architecture.patterns import costs, masks, variants


@st.cache_data(max_entries=4, show_spinner=False)
def variant_names() -> dict[str, str]:
    """Key -> display name of every variant whose pattern can be drawn."""
    return {k: v.name for k, v in variants.supported_variants().items()}


@st.cache_data(max_entries=128, show_spinner=False)
def pattern_view(
    key: str, seq_len: int, layer: int, part: str, global_positions: tuple[int, ...], seed: int,
    dilation: int, dec_len: int, max_cells: int,
) -> tuple[variants.VariantPattern, masks.MaskView]:
    """The variant's pattern, and its mask max-pooled to at most ``max_cells`` per side."""
    vp = patterns.pattern_for_variant(
        key, seq_len, layer, part=part, global_positions=global_positions, seed=seed, dilation=dilation,
        dec_len=dec_len, allow_beyond_max=True,  # the page draws it and warns instead
    )
    return vp, patterns.mask_view(vp.spec, max_cells)


@st.cache_data(max_entries=128, show_spinner=False)
def cost_curve(
    key: str, layer: int | None, global_positions: tuple[int, ...], seed: int, dilation: int
) -> costs.CostCurve:
    """Closed-form cost curve 512..16,384 tokens (mean over layers when ``layer`` is None)."""
    return patterns.variant_cost_curve(
        key, layer=layer, global_positions=global_positions, seed=seed, dilation=dilation
    )


@st.cache_data(max_entries=64, show_spinner=False)
def layer_count(key: str) -> int:
    """Layers of the variant's encoder (or only stack)."""
    return variants.variant_layers(key)


@st.cache_data(max_entries=64, show_spinner=False)
def diagram_plan(keys: tuple[str, ...], parts: tuple[str, ...], layer: int) -> tuple[tuple[str, str, int], ...]:
    """``(key, part, layer)`` of every diagram to draw (see ``variants.diagram_plan``)."""
    return variants.diagram_plan(keys, parts, layer)
