"""Compression lab: quantize or prune a copy of a real model, and measure what it buys and costs."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import cache_compression as cache
from app import device_picker, ui
from explorer.compression import study
from explorer.compression.methods import FIXED, PATTERNS
from explorer.compression.study import DEFAULT_CANDIDATES, DEFAULT_PROMPTS
from explorer.plots import compression as plots

MODELS = {"sentence-bert": "all-MiniLM-L6-v2 (encoder, 23M)", "gemma3-270m": "Gemma 3 270M (decoder, bundled Q4_K_M)"}
OFFERED = ["bf16", "fp16", "int8", "w8", "w4", "prune-30", "prune-50", "prune-90", "heads-25", "heads-50"]
DEFAULT_METHODS = ["int8", "bf16", "prune-50"]
RAN = "_compression_ran"  # the last study asked for: reruns redraw it from the cache

where = device_picker.pick()
st.title("Compression lab")
st.caption("Each method works on a copy of the loaded model (the original is never changed) and is measured "
           "beside it: size on disk, latency on this device, and agreement with the original's outputs.")

ui.seed_from_url("cmp_model", "model", list(MODELS))
model = st.selectbox("Model", list(MODELS), format_func=MODELS.__getitem__, key="cmp_model")
st.query_params["model"] = model
methods = st.multiselect(
    "Methods", OFFERED, default=ui.query_list("methods", DEFAULT_METHODS, OFFERED), key="cmp_methods",
    accept_new_options=True,
    help="Type prune-N or heads-N for another percentage (0-99). " + " · ".join(
        f"{k}: {v}" for k, v in {**FIXED, **PATTERNS}.items()))
ui.set_query_list("methods", [m for m in methods if m in OFFERED])
decoder = model == "gemma3-270m"
prompt = st.text_input("Prompt for the side-by-side answers", value=DEFAULT_PROMPTS["decoder" if decoder else "encoder"],
                       key=f"cmp_prompt_{model}",
                       help="Gemma continues it greedily; MiniLM ranks the candidate sentences by similarity to it.")
if not decoder:
    st.caption("Candidates: " + " · ".join(DEFAULT_CANDIDATES))
else:
    st.caption("Gemma on two CPU cores takes a minute or more a method. Each method is one request: one that runs "
               "past the server's time budget (EXPLORER_REQUEST_SECONDS) is stopped with a note, and the methods "
               "measured before it stay. The command line has no limit: python -m explorer compress gemma3-270m.")

asked = (model, tuple(methods), prompt, where.device)
if st.button("Run", type="primary", key="cmp_run"):
    st.session_state[RAN] = asked
if st.session_state.get(RAN) != asked:
    st.info("Pick a model and methods, then press Run.", icon=":material/play_arrow:")
    st.stop()

parts = []
bar = st.progress(0.0, text="Starting…")
with ui.guard():  # a bad method or a request out of time: a box, and the methods measured before it
    if not methods:
        study.combine([])  # says what to do
    for i, method in enumerate(methods):
        bar.progress(i / len(methods), text=f"{method}: compressing a copy and measuring it beside the original…")
        parts.append(cache.one_method(model, method, prompt, where.device))
bar.empty()
if not parts:
    st.stop()
result = study.combine(parts)

ui.notices(result.notices)
st.caption(f"{result.name} · {device_picker.ran_caption(result)} · original {result.baseline.size_bytes / 1e6:,.1f} MB "
           f"on disk · quality: {result.baseline.quality.metric}")
ui.figure(plots.tradeoff_figure(result), "compression_tradeoff", key="cmp_fig")

table = pd.DataFrame([{
    "method": r["method"], "size MB": round(r["size_bytes"] / 1e6, 2),
    "× size": round(r["size_bytes"] / r["baseline_size_bytes"], 3), "latency ms": r["latency_ms"],
    "× latency": round(r["latency_ms"] / r["baseline_latency_ms"], 3) if r["baseline_latency_ms"] else None,
    f"throughput ({r['throughput_unit']})": r["throughput"], r["quality"]["metric"]: r["quality"]["value"],
    "original": r["quality"]["baseline_value"],
    **{k: v for k, v in r["quality"].items() if k not in ("metric", "value", "baseline_value")},
    "sparsity": r["sparsity"]} for r in result.records()])
st.dataframe(table, hide_index=True, width="stretch")
ui.csv_download(table, "compression", key="cmp_csv")

st.subheader("Answers on one prompt")
st.caption(("Prompt: " if decoder else "Candidates ranked by similarity to: ") + ui.markdown_safe(result.prompt))
answers = pd.DataFrame([{"model": r.method, "answer": r.answer} for r in (result.baseline, *result.rows)])
st.dataframe(answers, hide_index=True, width="stretch")
