"""The Mechanisms page's SiFT tab: DeBERTa's scale-invariant perturbation against a uniform one of the same size,
computed on a bundled real model (compute in ``explorer.papers.mechanisms.sift``, display here)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import ui
from app.caches import mechanisms as cache
from explorer.core import limits
from explorer.runtime.placement import PlacementKwargs

MODELS = {"sentence-bert": "all-MiniLM-L6-v2 (bundled encoder: word embeddings of different sizes)",
          "gemma3-270m": "Gemma 3 270M (bundled decoder: scaled embeddings of one size)"}


def show(where: PlacementKwargs) -> None:
    """The tab: a prompt, a size, and how far each perturbation moves the output and each token."""
    st.markdown("**SiFT** (He et al. 2021, Sec. 3.4): virtual adversarial training on *normalised* word "
                "embeddings, so that each token is moved by the same share of its own scale. Below, the adversarial "
                "direction (one power-iteration step of virtual adversarial training) on a real model, then two "
                "perturbations of the same total size along it: SiFT's, scaled per token, and a uniform one.")
    c1, c2 = st.columns([2, 1])
    model = c1.selectbox("Model", list(MODELS), format_func=MODELS.__getitem__, key="sift_model")
    epsilon = c2.select_slider("Size (share of a token's scale)", [0.01, 0.05, 0.1, 0.2, 0.5, 1.0], 0.2,
                               key="sift_eps")
    text = st.text_input("Prompt", "The capital of France is Paris.", key="sift_text",
                         max_chars=limits.SIFT_PROMPT_CHARS)
    with ui.guard():
        r = cache.sift(model, text, float(epsilon), **where)
        m1, m2 = st.columns(2)
        m1.metric(f"SiFT: {r.measure}", f"{r.kl_sift:.4f}")
        m2.metric(f"Uniform: {r.measure}", f"{r.kl_uniform:.4f}")
        fig = go.Figure([go.Bar(name="SiFT (per token)", x=list(range(len(r.tokens))), y=list(r.relative_sift)),
                         go.Bar(name="uniform", x=list(range(len(r.tokens))), y=list(r.relative_uniform))])
        fig.update_layout(title="How far each token moved, relative to its own embedding", barmode="group",
                          xaxis={"tickvals": list(range(len(r.tokens))), "ticktext": list(r.tokens)},
                          yaxis_title="||δ_t|| / ||e_t||")
        ui.figure(fig, "sift", key="sift_fig")
        table = pd.DataFrame({"token": r.tokens, "embedding scale (std)": r.scale, "SiFT": r.relative_sift,
                              "uniform": r.relative_uniform})
        st.dataframe(table, hide_index=True, width="stretch")
        if r.top_clean:
            st.caption("Next token, clean → SiFT → uniform: " + " · ".join(
                ", ".join(f"{t!r} {p:.2f}" for t, p in top[:3]) for top in (r.top_clean, r.top_sift, r.top_uniform)))
        st.caption("Small vectors (function words in MiniLM) are pushed hardest by a uniform perturbation; SiFT "
                   "moves every token by the same share. Training to resist these moves (the rest of SiFT) is not "
                   "run here.")
