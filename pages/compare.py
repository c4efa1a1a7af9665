"""Comparator: several variants side by side (size, memory, FLOPs, scaling with length)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import ui
from app.caches import architecture as cache
from explorer.architecture.compare import MAX_COMPARE
from explorer.plots import architecture as plots

st.title("Compare variants")
st.caption("Pick variants; the selection is in the URL, so the comparison can be shared as a link.")

keys = ui.pick_variants("Variants", param="models", max_selections=MAX_COMPARE, key="cmp_models",
                        default=["bert-base", "roberta-base", "albert-base", "distilbert", "gpt2", "t5-small",
                                 "longformer", "bigbird"])
seq_len = int(st.select_slider("Sequence length for FLOPs per token", [128, 256, 512, 1024, 2048, 4096],
                               value=512, key="cmp_seq"))
if not keys:
    st.info("Pick at least one variant.")
    st.stop()

result = None
with ui.guard():
    result = cache.compare_variants(tuple(keys), seq_len)
if result is None:
    st.stop()

frame = pd.DataFrame(result.rows).astype({"decoder_layers": "Int64"})  # None (no decoder) stays empty, not NaN
shown = frame.assign(
    params=frame["params"].map(ui.human), params_with_heads=frame["params_with_heads"].map(ui.human),
    fp32=frame["fp32_bytes"].map(ui.human_bytes), fp16=frame["fp16_bytes"].map(ui.human_bytes),
    int8=frame["int8_bytes"].map(ui.human_bytes), flops_per_token=frame["flops_per_token"].map(ui.human),
).drop(columns=["fp32_bytes", "fp16_bytes", "int8_bytes", "key"])
st.dataframe(shown, hide_index=True, placeholder="—")  # a missing cell (no decoder, no reported budget)
ui.csv_download(frame, "comparison", key="dl_compare")
ui.page_link("forward.py", f"See {' and '.join(keys[:2])} compute side by side (the forward pass, step by step)",
             ":material/conveyor_belt:", models=",".join(keys[:2]))

left, right = st.columns(2)
with left:
    share = st.toggle("Components as share of each model", value=True, key="cmp_share")
    ui.figure(plots.stacked_components(result, share), "components", height=480)
with right:
    ui.figure(plots.params_log(result), "parameters", height=480)
left, right = st.columns(2)
with left:
    ui.figure(plots.scaling(result, "flops"), "flops-vs-length", height=420)
with right:
    ui.figure(plots.scaling(result, "memory"), "attention-memory-vs-length", height=420)
st.caption("Full attention grows quadratically with length (a straight line of slope 2 on the memory chart); "
           "Longformer's window and BigBird's blocks grow linearly. FLOPs per token = 2 x weights used + "
           "4 x layers x d_attn x keys scored, d_attn = heads x head width (T5-11B: 16,384, not its d_model 1,024): "
           "weights as in Kaplan et al. 2020 (Table 1); attention counts QKᵀ and AV, as Hoffmann et al. 2022 "
           "(Appendix F) do, where Kaplan's Table 1 counts QKᵀ alone (factor 2); a causal layer scores every key, as "
           "a dense kernel does; DeBERTa adds its content-to-position and position-to-content scores (He et al. 2021, "
           "eq. 2-4). Within 3% of PyTorch's FlopCounterMode for every dense family. "
           "train_flops is the pretraining compute the paper reports, else 6 x parameters x tokens (marked "
           "'estimated' in train_flops_source); `python -m explorer budget` lists every recorded budget.")
