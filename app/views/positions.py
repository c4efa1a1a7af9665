"""Drawing of the Positions page: one variant's positions (its scheme, what position gives every pair of the text,
the figures of its kind), the key/value-cache calculator, and the live cached-against-uncached generation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from app import ui
from app.views.device_picker import ran_caption
from explorer.architecture import kvcache
from explorer.core.labels import escape_markdown
from explorer.core.notices import Notice
from explorer.core.units import human_bytes
from explorer.plots import positions as plots
from explorer.tasks.generation.cachelive import CacheMeasurement
from explorer.tasks.positions import PositionView

__all__ = ["calculator", "column", "live", "reference"]

_HIDDEN = ("model", "label", "model_type", "explained", "stacks", "notes", "kind", "module")


def _facts(v: PositionView) -> None:
    s = v.scheme
    st.markdown(f"**{escape_markdown(s.label)}** · `{s.kind}`: {escape_markdown(s.explained)}.")
    facts = {k: val for k, val in s.to_dict().items() if k not in _HIDDEN and val not in (None, [], {})}
    st.caption(escape_markdown(" · ".join(f"{k.replace('_', ' ')}: {val}" for k, val in facts.items())))
    st.caption(escape_markdown(f"Numbers from {v.source}." + (f" Module: {s.module}." if s.module else "")))
    for what, error in v.checks:
        st.caption(escape_markdown(f"Checked: {what}: largest difference {error:.1e}."))
    for note in v.notes:
        ui.notice(Notice("missing", note))


def column(v: PositionView, name: str, series: Mapping[str, object], key: str) -> None:
    """One variant: its scheme, the pair matrix over the text, and its kind's own figures."""
    _facts(v)
    ui.figure(plots.pair_matrix(v, name), f"positions-pairs-{key}", key=f"pos_pairs_{key}")
    s = v.scheme
    if v.table is not None:
        ui.figure(plots.table_similarity(v.table, v.random, name), f"positions-table-{key}", key=f"pos_table_{key}")
        ui.figure(plots.table_components(v.table, name), f"positions-pca-{key}", key=f"pos_pca_{key}")
    if v.bias is not None:
        ui.figure(plots.t5_bias(v.bias, name), f"positions-bias-{key}", key=f"pos_bias_{key}")
    if s.kind == "rotary":
        ui.figure(plots.rotary_frequencies(s), f"positions-freq-{key}", key=f"pos_freq_{key}")
        ui.figure(plots.rotary_steps(s), f"positions-steps-{key}", key=f"pos_steps_{key}")
    if s.kind == "disentangled":
        ui.page_link("mechanisms.py", "DeBERTa's disentangled attention, split term by term: Mechanisms",
                     ":material/functions:")
    lines = series.get("series")
    if isinstance(lines, Mapping) and lines:
        what = {"rotary": "score of equal vectors (the decay)", "sinusoidal": "dot product of two positions",
                "relative-buckets": "bucket of each distance", "disentangled": "bucket of each distance"}
        ui.figure(plots.by_distance(series, name, what.get(s.kind, "")), f"positions-distance-{key}",
                  key=f"pos_distance_{key}")
    if v.weights:
        st.caption(escape_markdown(ran_caption(v)))


def reference() -> None:
    """ALiBi from its formula: the reference no catalog variant uses."""
    with st.expander("ALiBi: a linear penalty per head (no catalog variant uses it)"):
        ui.figure(plots.alibi_reference(), "positions-alibi", key="pos_alibi")


def calculator(curves: Sequence[kvcache.CacheCurve], weights: Mapping[str, int], plan: kvcache.CachePlan) -> None:
    """Every chosen variant's cache against context (log axes) beside its weights, and one plan's layers."""
    ui.figure(plots.cache_curves(curves, weights), "kv-cache-curves", key="pos_curves")
    st.markdown(f"**{escape_markdown(plan.model)}** at {plan.context:,} tokens in {plan.dtype}: "
                f"**{human_bytes(plan.bytes)}** ({plan.grouping}: {plan.kv_heads} key/value head(s) for "
                f"{plan.heads} query heads; {plan.bytes_per_token:,} bytes a token while no window is full).")
    for note in plan.notes:
        ui.notice(Notice("info", note))
    ui.figure(plots.cache_layers(plan), "kv-cache-layers", key="pos_layers")


def live(m: CacheMeasurement) -> None:
    """The two texts, their speeds, and the cache's tensors beside the calculator's bytes."""
    same = "the same tokens" if m.tokens_equal else "different tokens"
    c1, c2, c3 = st.columns(3)
    c1.metric("With the cache", f"{m.cached_tokens_per_s:.1f} tokens/s")
    c2.metric("Without it", f"{m.uncached_tokens_per_s:.1f} tokens/s")
    ratio = m.cached_tokens_per_s / m.uncached_tokens_per_s if m.uncached_tokens_per_s else 0.0
    c3.metric("Speed-up", f"{ratio:.1f}x", help=f"{len(m.cached_ids)} new tokens; both greedy: {same}")
    if not m.tokens_equal:
        ui.notice(Notice("info", "The two runs chose different tokens: in half precision the cached and the "
                                 "recomputed keys can differ in the last bit and tip a near tie."))
    left, right = st.columns(2)
    left.text_area("Text with the cache", m.cached_text, disabled=True, key="pos_live_cached")
    right.text_area("Text without it", m.uncached_text, disabled=True, key="pos_live_uncached")
    st.markdown(f"The cache after {m.context:,} positions: **{human_bytes(m.measured_bytes)}** measured, "
                f"**{human_bytes(m.calculated.bytes)}** calculated.")
    st.dataframe([{"layer": t.layer, "kind": t.kind, "shape (batch, kv heads, positions, width)": str(list(t.shape)),
                   "window": t.window, "bytes": t.bytes} for t in m.tensors], hide_index=True)
    st.caption(escape_markdown(ran_caption(m)))
