"""Architecture explorer: any variant (or your config.json) -> layer tree, components, cost."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from app import cache_architecture as cache
from app import ui
from explorer.architecture.treetable import text_tree
from explorer.plots import architecture as plots

st.title("Architecture explorer")
st.caption("Every model is built from its configuration on PyTorch's meta device: real modules and "
           "parameter counts, no weights, no memory. GPT-3 175B opens as fast as BERT-base.")

source = st.radio("Model", ["Catalog variant", "Upload config.json"], horizontal=True, key="arch_source")
left, right = st.columns([2, 1])
with left:
    if source == "Catalog variant":
        key = ui.pick_variant("Variant", param="model", default="bert-base", key="arch_variant")
        upload = None
    else:
        key = None
        upload = st.file_uploader("config.json (a Hugging Face model config)", type=["json"], key="arch_upload")
with right:
    seq_len = int(st.select_slider("Sequence length (shapes, FLOPs)", [16, 64, 128, 256, 512, 1024, 2048, 4096],
                                   value=128, key="arch_seq"))

base = cache.config_summary(key) if key else {}
with st.expander("Change the architecture (layers, width, heads, sharing...)", expanded=False):
    cols = st.columns(4)
    knobs = [("num_hidden_layers", "Layers", base.get("layers")), ("hidden_size", "Hidden size", base.get("hidden")),
             ("num_attention_heads", "Heads", base.get("heads")), ("intermediate_size", "FFN size", base.get("ffn")),
             ("vocab_size", "Vocabulary", base.get("vocab")), ("embedding_size", "Embedding size", None)]
    overrides: dict[str, int] = {}
    for i, (name, label, default) in enumerate(knobs):
        start = default if isinstance(default, int) else 0
        value = cols[i % 4].number_input(label, min_value=0, max_value=1_000_000, value=start, step=1,
                                         key=f"knob_{name}_{key}",
                                         help=None if start else "0 keeps the configuration's value")
        if int(value) != start:
            overrides[name] = int(value)
    share = cols[2].toggle("Share all layers (ALBERT-style)", key=f"share_{key}")

result = None
with ui.guard():
    items = tuple(sorted(overrides.items()))
    if key:
        result = cache.analyse_variant(key, seq_len, items, share)
    elif upload is not None:
        result = cache.analyse_upload(upload.getvalue(), upload.name, seq_len, items, share)
    else:
        st.info("Upload a config.json to inspect your own architecture.")
if result is None:
    st.stop()

if key:
    with st.container(border=True):
        ui.variant_card(key)
m = st.columns(4)
m[0].metric("Parameters (with heads)", ui.human(result.params), help=f"{result.params:,} unique, tied counted once")
m[1].metric("Bare model", ui.human(result.base_params), help=f"{result.base_params:,} without task heads")
m[2].metric("Weights fp32", ui.human_bytes(result.memory["fp32"]),
            help=f"fp16 {ui.human_bytes(result.memory['fp16'])} · int8 {ui.human_bytes(result.memory['int8'])} · "
                 f"training with Adam ≈ {ui.human_bytes(result.memory['train_fp32_adam'])}")
m[3].metric(f"FLOPs/token @ {seq_len}", ui.human(result.flops.total),
            help=f"weights {result.flops.matmul_flops:,} + attention {result.flops.attention_flops:,}")
st.caption(f"`{result.model_class}` · fp16 {ui.human_bytes(result.memory['fp16'])} · "
           f"int8 {ui.human_bytes(result.memory['int8'])} · training (fp32 + Adam) ≈ "
           f"{ui.human_bytes(result.memory['train_fp32_adam'])}")
if result.tied:
    st.caption("Tied (counted once): " + "; ".join(result.tied[:6]) + (" ..." if len(result.tied) > 6 else ""))
if result.shared_blocks:
    st.caption("Shared blocks: " + "; ".join(result.shared_blocks))
for note in result.notes:
    st.caption(note)

tabs = st.tabs(["Layer tree", "Components", "Treemap", "Sunburst", "Module graph", "Text view", "Config"])
with tabs[0]:
    depth = st.slider("Open levels", 0, 6, 4, key="tree_open")
    st.html(plots.tree_html(result.tree, open_depth=depth))
with tabs[1]:
    ui.figure(plots.components_figure(result.components, f"{result.name}: parameters by component"),
              f"{result.name}-components")
    frame = pd.DataFrame({"component": list(result.components), "parameters": list(result.components.values())})
    frame["share %"] = (100 * frame["parameters"] / result.params).round(2)
    st.dataframe(frame, hide_index=True)
    ui.csv_download(frame, f"{result.name}-components", key="dl_components")
with tabs[2]:
    ui.figure(plots.tree_figure(result.tree, "treemap"), f"{result.name}-treemap", height=600)
with tabs[3]:
    ui.figure(plots.tree_figure(result.tree, "sunburst"), f"{result.name}-sunburst", height=650)
with tabs[4]:
    gdepth = st.slider("Graph depth", 1, 6, 3, key="graph_depth")
    ui.figure(plots.module_graph(result.tree, gdepth), f"{result.name}-graph", height=550)
with tabs[5]:
    tdepth = st.slider("Text depth", 1, 8, 4, key="text_depth")
    st.code(text_tree(result.tree, tdepth), language=None)
with tabs[6]:
    st.code(json.dumps(result.config, indent=2, default=str), language="json")
