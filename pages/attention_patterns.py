"""Sparse patterns: who may attend to whom in each variant, drawn from its config, and what it costs."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import cache_patterns as cache
from app import ui
from explorer import patterns
from explorer.core import userinput
from explorer.plots import patterns as plots

DEFAULT_VARIANTS = ("bert-base", "gpt2", "longformer", "bigbird", "gpt-neo", "t5-base")
METRIC_LABELS = {"score_memory_bytes": "Score memory", "flops": "FLOPs", "nnz": "Non-zeros", "density": "Density"}

st.title("Sparse attention patterns")
st.caption("Who may attend to whom, built from each variant's published config (no weights needed). "
           "Blue = the query token (row) may attend to the key token (column).")

names = cache.variant_names()
default = [k for k in DEFAULT_VARIANTS if k in names] or list(names)[:4]
picked = st.multiselect("Variants", list(names), default=ui.query_list("variants", default, list(names)),
                        format_func=lambda k: names[k], key="patterns_variants")
ui.set_query_list("variants", picked)

c1, c2, c3, c4 = st.columns(4)
seq_len = int(c1.number_input("Sequence length (tokens)", 1, 16_384, ui.query_int("len", 1024, 1, 16_384),
                              step=64, key="patterns_len",
                              help="Try 704 vs 705 for BigBird: at or below (5 + 2 x 3) x 64 it runs full attention."))
max_layers = max([cache.layer_count(k) for k in picked] or [1])
layer = int(c2.number_input("Layer (alternating / per-layer patterns)", 0, max_layers - 1,
                            ui.query_int("layer", 0, 0, max_layers - 1), key="patterns_layer",
                            help="GPT-Neo and GPT-3 alternate global (even) and local (odd) layers."))
seed = int(c3.number_input("BigBird seed (random blocks)", 0, 2**31 - 1, ui.query_int("seed", 0, 0, 2**31 - 1),
                           key="patterns_seed"))
cells = int(c4.select_slider("Diagram resolution (cells per side)", [128, 256, 512], 256, key="patterns_cells",
                             help="Longer inputs are max-pooled to this many cells; the figure says so."))

g1, g2, g3 = st.columns([2, 1, 1])
glob_text = g1.text_input("Longformer global tokens (positions, e.g. 5, 17)",
                          st.query_params.get("globals", "")[: userinput.MAX_POSITIONS_CHARS],
                          max_chars=userinput.MAX_POSITIONS_CHARS, key="patterns_globals",
                          help="[CLS] (position 0) is always global; add question tokens here.")
dilation = int(g2.number_input("Longformer dilation", 1, 8, ui.query_int("dilation", 1, 1, 8), key="patterns_dilation",
                               help="Dilated windows skip keys to reach further with the same cost (the paper "
                                    "uses them in some heads; the released config has none)."))
ed_parts = g3.pills("Encoder-decoder parts", patterns.ENCODER_DECODER_PARTS, selection_mode="multi",
                    default=list(patterns.ENCODER_DECODER_PARTS), key="patterns_parts")

globals_: tuple[int, ...] = ()
with ui.guard():
    globals_ = userinput.parse_positions(glob_text, seq_len)
if not glob_text.strip():
    st.caption("Only [CLS] (position 0) is a global token in Longformer.")
st.query_params.update({"len": str(seq_len), "layer": str(layer), "seed": str(seed), "dilation": str(dilation),
                        "globals": ",".join(map(str, globals_))})
if not picked:
    st.info("Pick at least one variant above.")
    st.stop()

# --- diagrams ---------------------------------------------------------------------------------
plan = cache.diagram_plan(tuple(picked), tuple(ed_parts or ()), layer)
rows = []
with st.spinner(f"Building {len(plan)} masks of {seq_len:,} tokens..."):
    for n, (key, part, lay) in enumerate(plan):
        if n % 3 == 0:  # a new row of three, so that rows stay aligned whatever the captions
            cols = st.columns(3)
        with cols[n % 3], ui.guard():
            vp, view = cache.pattern_view(key, seq_len, lay, part, globals_, seed, dilation, seq_len, cells)
            rows.append(patterns.table_row(vp, view.nnz_counted))
            ui.figure(plots.variant_mask_heatmap(vp, view), f"pattern_{key}_{vp.part}_{seq_len}",
                      key=f"fig_{key}_{part}")
            st.caption(f"{vp.stats.note}. Density {vp.stats.density:.2%}, "
                       f"{vp.stats.nnz:,} of {vp.stats.q_len * vp.stats.k_len:,} pairs.")
            if vp.beyond_max_positions:
                st.warning(f"{vp.name} takes at most {vp.max_positions:,} tokens: drawn only for comparison.")
            if lay != layer:
                st.caption(f"{vp.name} has {vp.n_layers} layers: showing layer {lay}.")

if any(r["kind"] == "block-sparse" for r in rows):
    st.caption("BigBird's random blocks follow the paper and training mode: each head draws its own (the seed "
               "picks one draw, the count and so the cost are the same). In eval mode transformers fills every "
               "random slot with block 0, already global: inference reaches window + global pairs only, "
               "while still computing the extra blocks.")

# --- table ------------------------------------------------------------------------------------
st.subheader(f"Cost at {seq_len:,} tokens (one head, one layer, fp32 scores)")
st.caption("Sparse memory = 4 bytes per attending pair (what a sparse kernel stores); dense = the full "
           "query x key matrix a naive implementation fills before masking. FLOPs = 4 x d_head x pairs. "
           "Non-zeros come from a closed-form formula and are checked by counting the mask itself.")
table = pd.DataFrame(rows)
st.dataframe(table, hide_index=True, width="stretch")
ui.csv_download(table, f"attention_patterns_{seq_len}", key="patterns_csv")

# --- scaling ----------------------------------------------------------------------------------
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
            lay = min(layer, cache.layer_count(key) - 1) if one_layer else None
            curves.append(cache.cost_curve(key, lay, globals_, seed, dilation))
if curves:
    ui.figure(plots.cost_chart(curves, metric), f"attention_cost_{metric}", key="fig_cost")
    st.caption("Closed-form counts (no 16k x 16k mask is ever built). Encoder-decoders: encoder self-attention.")
