"""Drawing for the Sparse patterns page: mask diagrams, the cost table and the scaling curves (Streamlit only;
every number comes from explorer.architecture.patterns through app/caches/patterns.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from app import ui
from app.caches import patterns as cache
from explorer.architecture import patterns
from explorer.plots import patterns as plots

METRIC_LABELS = {"score_memory_bytes": "Score memory", "flops": "FLOPs", "nnz": "Non-zeros", "density": "Density"}
BLOCK_SPARSE_NOTE = ("BigBird's random blocks follow the paper and training mode: each head draws its own (the seed "
                     "picks one draw, the count and so the cost are the same). In eval mode transformers fills every "
                     "random slot with block 0, already global: inference reaches window + global pairs only, while "
                     "still computing the extra blocks.")


@dataclass(frozen=True)
class Settings:
    """What every diagram and curve is drawn with (all of it but the parts is kept in the URL)."""

    seq_len: int
    layer: int
    seed: int
    cells: int
    dilation: int
    globals_: tuple[int, ...]
    parts: tuple[str, ...]


def diagram(key: str, part: str, lay: int, s: Settings) -> dict:
    """One variant's mask with its density, and warnings; returns its row of the cost table."""
    vp, view = cache.pattern_view(key, s.seq_len, lay, part, s.globals_, s.seed, s.dilation, s.seq_len, s.cells)
    ui.figure(plots.variant_mask_heatmap(vp, view), f"pattern_{key}_{vp.part}_{s.seq_len}", key=f"fig_{key}_{part}")
    st.caption(f"{vp.stats.note}. Density {vp.stats.density:.2%}, "
               f"{vp.stats.nnz:,} of {vp.stats.q_len * vp.stats.k_len:,} pairs.")
    if vp.beyond_max_positions:
        st.warning(f"{vp.name} takes at most {vp.max_positions:,} tokens: drawn only for comparison.")
    if lay != s.layer:
        st.caption(f"{vp.name} has {vp.n_layers} layers: showing layer {lay}.")
    return patterns.table_row(vp, view.nnz_counted)


def diagrams(picked: list[str], s: Settings) -> list[dict]:
    """The masks three to a row (rows stay aligned whatever the captions), and their cost-table rows."""
    plan = cache.diagram_plan(tuple(picked), s.parts, s.layer)
    rows: list[dict] = []
    with st.spinner(f"Building {len(plan)} masks of {s.seq_len:,} tokens..."):
        for start in range(0, len(plan), 3):
            for col, (key, part, lay) in zip(st.columns(3), plan[start:start + 3], strict=False):
                with col, ui.guard():
                    rows.append(diagram(key, part, lay, s))
    if any(r["kind"] == "block-sparse" for r in rows):
        st.caption(BLOCK_SPARSE_NOTE)
    return rows


def cost_table(rows: list[dict], seq_len: int) -> None:
    st.subheader(f"Cost at {seq_len:,} tokens (one head, one layer, fp32 scores)")
    st.caption("Sparse memory = 4 bytes per attending pair (what a sparse kernel stores); dense = the full "
               "query x key matrix a naive implementation fills before masking. FLOPs = 4 x d_head x pairs. "
               "Non-zeros come from a closed-form formula and are checked by counting the mask itself.")
    table = pd.DataFrame(rows)
    st.dataframe(table, hide_index=True, width="stretch")
    ui.csv_download(table, f"attention_patterns_{seq_len}", key="patterns_csv")


def scaling(picked: list[str], s: Settings) -> None:
    """Closed-form cost curves from 512 to 16,384 tokens, per layer or averaged over layers."""
    st.subheader("Scaling with sequence length (512 to 16,384 tokens)")
    m1, m2 = st.columns([2, 1])
    metric = m1.radio("Metric", list(METRIC_LABELS), format_func=METRIC_LABELS.get, horizontal=True,
                      key="patterns_metric")
    one_layer = m2.toggle("Only the selected layer", False, key="patterns_one_layer",
                          help="Off: mean over all layers (GPT-Neo's global layers keep it quadratic).")
    curves = []
    with st.spinner("Computing cost curves (closed form)..."):
        for key in picked:
            with ui.guard():
                lay = min(s.layer, cache.layer_count(key) - 1) if one_layer else None
                curves.append(cache.cost_curve(key, lay, s.globals_, s.seed, s.dilation))
    if curves:
        ui.figure(plots.cost_chart(curves, metric), f"attention_cost_{metric}", key="fig_cost")
        st.caption("Closed-form counts (no 16k x 16k mask is ever built). Encoder-decoders: encoder self-attention.")
