"""Architecture explorer: any variant (or your config.json) -> layer tree, components, cost."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from app import ui
from app.caches import architecture as cache
from explorer.architecture import knobs
from explorer.architecture.analysis import Analysis
from explorer.architecture.treetable import text_tree
from explorer.plots import architecture as plots


def model_choice() -> tuple[str | None, UploadedFile | None, int]:
    """A catalog variant (in the URL) or an uploaded config.json, and the sequence length."""
    source = st.radio("Model", ["Catalog variant", "Upload config.json"], horizontal=True, key="arch_source")
    left, right = st.columns([2, 1])
    key, upload = None, None
    with left:
        if source == "Catalog variant":
            key = ui.pick_variant("Variant", param="model", default="bert-base", key="arch_variant")
        else:
            upload = st.file_uploader("config.json (a Hugging Face model config)", type=["json"], key="arch_upload")
    with right:
        seq_len = int(st.select_slider("Sequence length (shapes, FLOPs)", [16, 64, 128, 256, 512, 1024, 2048, 4096],
                                       value=128, key="arch_seq"))
    return key, upload, seq_len


def knob_inputs(key: str | None) -> tuple[dict[str, int], bool]:
    """One number per knob (explorer.architecture.knobs: which setting, its start) and the sharing toggle."""
    items = knobs.knobs(cache.config_summary(key) if key else {})
    with st.expander("Change the architecture (layers, width, heads, sharing...)", expanded=False):
        cols = st.columns(4)
        values = [cols[i % 4].number_input(k.label, min_value=0, max_value=1_000_000, value=k.start, step=1,
                                           key=f"knob_{k.name}_{key}",
                                           help=None if k.start else "0 keeps the configuration's value")
                  for i, k in enumerate(items)]
        share = cols[2].toggle("Share all layers (ALBERT-style)", key=f"share_{key}")
    return knobs.overrides(items, values), share


def headline(result: Analysis, key: str | None, seq_len: int) -> None:
    """The variant's card, counts, memory and FLOPs, and what is tied or shared."""
    if key:
        with st.container(border=True):
            ui.variant_card(key)
            ui.page_link("forward.py", "See it compute: the forward pass, step by step", ":material/conveyor_belt:",
                         models=key)
    mem = {k: ui.human_bytes(v) for k, v in result.memory.items()}
    m = st.columns(4)
    m[0].metric("Parameters (with heads)", ui.human(result.params), help=f"{result.params:,} unique, tied counted once")
    m[1].metric("Bare model", ui.human(result.base_params), help=f"{result.base_params:,} without task heads")
    m[2].metric("Weights fp32", mem["fp32"],
                help=f"fp16 {mem['fp16']} · int8 {mem['int8']} · training with Adam ≈ {mem['train_fp32_adam']}")
    m[3].metric(f"FLOPs/token @ {seq_len}", ui.human(result.flops.total),
                help=f"weights {result.flops.matmul_flops:,} + attention {result.flops.attention_flops:,}")
    st.caption(f"`{result.model_class}` · fp16 {mem['fp16']} · int8 {mem['int8']} · training (fp32 + Adam) ≈ "
               f"{mem['train_fp32_adam']}")
    if result.tied:
        st.caption("Tied (counted once): " + "; ".join(result.tied[:6]) + (" ..." if len(result.tied) > 6 else ""))
    if result.shared_blocks:
        st.caption("Shared blocks: " + "; ".join(result.shared_blocks))
    for note in result.notes:
        st.caption(note)


def views(result: Analysis) -> None:
    """One tab per way of looking at the model."""
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


st.title("Architecture explorer")
st.caption("Every model is built from its configuration on PyTorch's meta device: real modules and "
           "parameter counts, no weights, no memory. GPT-3 175B opens as fast as BERT-base.")
key, upload, seq_len = model_choice()
overrides, share = knob_inputs(key)
result = None
with ui.guard():
    items = tuple(sorted(overrides.items()))
    if key:
        result = cache.analyse_variant(key, seq_len, items, share)
    elif upload is not None:
        result = cache.analyse_upload(upload.getvalue(), upload.name, seq_len, items, share)
    else:
        st.info("Upload a config.json to inspect your own architecture.")
if result is not None:
    headline(result, key, seq_len)
    views(result)
