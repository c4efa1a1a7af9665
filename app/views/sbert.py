"""The Similarity page's Sentence-BERT tab: pooling strategies measured on graded pairs, and the three training
objectives computed on three typed sentences (compute in ``explorer.tasks.sbert``, display here)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import ui
from app.caches import similarity as cache
from explorer.compression import quality
from explorer.core import limits
from explorer.runtime.placement import PlacementKwargs
from explorer.runtime.resolve import ModelRef
from explorer.tasks import sbert

HOW = {"cls": "CLS: the first token's output", "mean": "MEAN: the average of the real tokens (as trained)",
       "max": "MAX: per dimension, the largest value over the real tokens"}


def _pooling(model: ModelRef, where: PlacementKwargs) -> None:
    st.markdown("**Pooling**: three ways to turn the last layer's token vectors into one sentence vector, each "
                "scored by how well its cosine similarities rank the 40 bundled sentence pairs as a person graded "
                "them (0-5, graded by hand for this project: a teaching set, not STS). The paper's own ablation "
                "(its Table 6) is not shown: no readable copy of it was found.")
    rows = cache.pooling_study(model, **where)
    table = pd.DataFrame([{"pooling": HOW[r.pooling], "Spearman x 100": r.spearman} for r in rows])
    st.dataframe(table, hide_index=True, width="stretch")
    grades = quality.pair_grades()
    fig = go.Figure([go.Scatter(x=list(grades), y=list(r.cosines), mode="markers", name=r.pooling.upper())
                     for r in rows])
    fig.update_layout(title="Cosine similarity against the hand grade, per pooling", xaxis_title="grade (0-5)",
                      yaxis_title="cosine similarity")
    ui.figure(fig, "sbert-pooling", key="sim_pool_fig")
    pairs = quality.sentence_pairs()
    detail = pd.DataFrame({"first": [a for a, _ in pairs], "second": [b for _, b in pairs], "grade": grades,
                           **{r.pooling: r.cosines for r in rows}})
    ui.csv_download(detail, "pooling", key="sim_pool_csv")


def _objectives(model: ModelRef, where: PlacementKwargs) -> None:
    st.markdown("**Training objectives**, each computed from sentence vectors u (anchor), v (positive) and n "
                "(negative) of the encoder, mean-pooled as it was trained (Reimers & Gurevych 2019, Sec. 3).")
    c1, c2, c3 = st.columns(3)
    anchor = c1.text_input("Anchor", "A man is playing a guitar.", key="sbert_anchor",
                           max_chars=limits.SBERT_SENTENCE_CHARS)
    positive = c2.text_input("Positive", "Someone plays an instrument.", key="sbert_positive",
                             max_chars=limits.SBERT_SENTENCE_CHARS)
    negative = c3.text_input("Negative", "The stock market fell.", key="sbert_negative",
                             max_chars=limits.SBERT_SENTENCE_CHARS)
    c4, c5 = st.columns(2)
    label = c4.selectbox("NLI label of (anchor, positive)", sbert.LABELS, index=1, key="sbert_label")
    gold = c5.slider("Gold similarity of (anchor, positive), 0-5", 0.0, 5.0, 4.0, 0.5, key="sbert_gold")
    res = cache.objectives(model, anchor, positive, negative, label, gold, **where)
    probs = ", ".join(f"{name} {p:.2f}" for name, p in zip(sbert.LABELS, res.probabilities, strict=True))
    m1, m2, m3 = st.columns(3)
    m1.metric("Classification loss", f"{res.classification_loss:.3f}", help="-log p(label) of the untrained W")
    m2.metric("Regression loss", f"{res.regression_loss:.3f}", help="(cos(u, v) - gold / 5)^2")
    m3.metric("Triplet loss", f"{res.triplet_loss:.3f}", help="max(||u - v|| - ||u - n|| + margin, 0)")
    st.dataframe(pd.DataFrame([
        {"objective": "classification (NLI)", "computes": "softmax(W [u; v; |u - v|])",
         "here": probs, "loss": res.classification_loss},
        {"objective": "regression (STS)", "computes": "cos(u, v) against gold / 5, squared error",
         "here": f"cos {res.cosine:.3f} vs {res.gold / 5:.2f}", "loss": res.regression_loss},
        {"objective": "triplet", "computes": f"max(||u - v|| - ||u - n|| + {sbert.MARGIN:g}, 0)",
         "here": f"{res.distance_positive:.2f} vs {res.distance_negative:.2f}", "loss": res.triplet_loss},
    ]), hide_index=True, width="stretch")
    st.caption("W is learnt with the encoder during NLI training; the bundled checkpoint ships without it, so a "
               "seeded untrained W shows the computation: its probabilities are arbitrary. A triplet loss of 0 means "
               "the anchor is already nearer the positive than the negative by the margin.")


def show(model: ModelRef, where: PlacementKwargs) -> None:
    """The tab: pooling first, then the objectives, each under its own guard."""
    with ui.guard():
        _pooling(model, where)
    with ui.guard():
        _objectives(model, where)
