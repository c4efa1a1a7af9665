"""Mechanisms: DeBERTa's disentangled attention, distillation losses and text-to-text framings, computed.

Widgets -> app.caches.mechanisms -> explorer.papers.mechanisms.* -> explorer.plots.mechanisms.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import ui
from app.caches import mechanisms as cache
from app.views import device_picker
from app.views import sift as sift_view
from app.views import text2text as text_view
from explorer.papers.mechanisms import deberta, distillation
from explorer.plots import mechanisms as plots

TEXT, TEMPERATURES = "Paris is the capital of France, and Rome is the capital of Italy.", ("1", "2", "4", "8")

where = device_picker.pick().kwargs()  # DeBERTa's real module and the distillation models run there
st.title("Mechanisms")
st.caption("What defines a variant, computed on real modules built from the catalog configs. The weights are "
           "**random** (nothing is downloaded): the point is the arithmetic, which holds for any weights; "
           "trained weights would change the numbers, not how they are made.")
tab_deberta, tab_distil, tab_text, tab_sift = st.tabs(
    ["DeBERTa attention", "Distillation", "Text-to-text", "SiFT (DeBERTa)"], key="tab", bind="query-params")


def show_deberta() -> None:
    c1, c2 = st.columns([1, 3])
    current = ui.query_choice("deberta", deberta.SUPPORTED, "deberta-v3-base")
    key = c1.selectbox("Variant", deberta.SUPPORTED, index=deberta.SUPPORTED.index(current), key="mech_deberta")
    st.query_params["deberta"] = key
    text = c2.text_input("Sentence", TEXT, key="mech_deberta_text", help="DeBERTa's own vocabulary files are not "
                         f"shipped: {deberta.STAND_IN.get(key, 'bert-base-uncased')}'s tokenizer stands in.")
    with ui.guard():
        split = cache.deberta_split(key, text, **where)
        heads = split.c2c.shape[0]
        head = st.slider("Head", 0, heads - 1, ui.query_int("head", 0, 0, heads - 1), key="mech_head")
        st.query_params["head"] = str(head)
        m1, m2, m3 = st.columns(3)
        m1.metric("max |softmax(c2c+c2p+p2c) − model's probabilities|", f"{split.max_prob_error:.1e}")
        m2.metric("max |c2p+p2c − model's own position bias|", f"{split.max_bias_error:.1e}")
        m3.metric("tokens × heads", f"{len(split.tokens)} × {heads}")
        ui.figure(plots.deberta_terms(split, head), f"deberta_terms_head{head}", key="mech_terms")
        shares = pd.DataFrame([{"head": h, **split.shares(h)} for h in range(heads)])
        st.caption(f"Mean |term| per head: how much each term contributes before the softmax · "
                   f"{device_picker.ran_caption(split)}.")
        st.dataframe(shares, hide_index=True)
        ui.csv_download(shares, "deberta_term_shares", key="mech_shares_csv")
        distances, buckets, exact = cache.deberta_buckets(key)
        ui.figure(plots.bucket_chart(distances, buckets, exact), "deberta_buckets", key="mech_buckets")
    st.info(deberta.EMD_NOTE, icon=":material/info:")


def show_distillation() -> None:
    c1, c2, c3 = st.columns([4, 1, 1])
    text = c1.text_input("Sentence (15% of its word pieces are masked)", TEXT, key="mech_distil_text")
    seed = c2.number_input("Mask seed", 0, 9999, ui.query_int("seed", 0, 0, 9999), key="mech_seed")
    ui.seed_from_url("mech_temperature", "T", TEMPERATURES)
    temp = c3.select_slider("Temperature T", TEMPERATURES, value="2", key="mech_temperature")
    st.query_params.update(seed=str(seed), T=temp)
    with ui.guard():
        sizes = cache.sizes()
        st.caption(f"Teacher BERT-base {ui.human(sizes.teacher)} parameters, DistilBERT {ui.human(sizes.distilbert)}, "
                   f"TinyBERT {ui.human(sizes.tinybert)} (with MLM heads; random weights, built once per process).")
        res = cache.triple(text, int(seed), float(temp), **where)
        st.code(" ".join(res.inp.tokens), language=None, wrap_lines=True)
        st.subheader("DistilBERT: triple loss")
        st.caption(f"Ran on {res.device_name} · {res.dtype}. L = 5·L_ce + 2·L_mlm + 1·L_cos, T = 2: the released "
                   "training command (Sanh et al. 2019; transformers examples/research_projects/distillation). "
                   "L_ce = T²·KL(teacher_T ‖ student_T) over every position, L_mlm at the masked ones, "
                   "L_cos = 1 − cos of the last hidden states.")
        c1, c2 = st.columns(2)
        with c1:
            ui.figure(plots.triple_loss_bars(res), "distilbert_triple_loss", key="mech_triple")
        with c2:
            losses, kl, entropy = cache.temperature_curve(text, int(seed), **where)
            ui.figure(plots.temperature_chart(distillation.CURVE_TEMPERATURES, losses, kl, entropy,
                                              res.teacher_logits.shape[-1]),
                      "distillation_temperature", key="mech_temp")
        show_tinybert(text, int(seed))


def show_tinybert(text: str, seed: int) -> None:
    st.subheader("TinyBERT: layer-wise distillation")
    st.caption("Jiao et al. 2020 §3.1: attention MSE on unnormalised scores, hidden MSE through W_h (312 → 768), "
               "embedding MSE through W_e, soft cross-entropy of the predictions (t = 1, at the masked positions). "
               "W_h and W_e are at their N(0, 0.02) initialisation; training learns them.")
    res = cache.layerwise(text, seed, **where)
    c1, c2 = st.columns(2)
    with c1:
        ui.figure(plots.layer_mapping(res.mapping, res.n_teacher), "tinybert_layer_mapping", key="mech_map")
    with c2:
        ui.figure(plots.layerwise_bars(res), "tinybert_layerwise_losses", key="mech_layerwise")
    st.caption("Check: softmax of the scores compared equals both models' attention "
               f"(max error {res.score_check:.1e}).")
    table = pd.DataFrame([{"student layer": m, "teacher layer g(m)": g,
                           "attention MSE": res.attention[m - 1] if m else None,
                           "hidden MSE": res.hidden[m - 1] if m else res.embedding} for m, g in enumerate(res.mapping)])
    st.dataframe(table, hide_index=True)
    ui.csv_download(table, "tinybert_layerwise_losses", key="mech_layer_csv")


for tab, show in ((tab_deberta, show_deberta), (tab_distil, show_distillation), (tab_text, text_view.show),
                  (tab_sift, lambda: sift_view.show(where))):
    if tab.open:
        with tab:
            show()
