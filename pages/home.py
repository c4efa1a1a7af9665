"""Overview: what the tool is, and every variant in the catalog at a glance."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from app import cache_architecture as cache
from app import ui

st.title("Transformer Explorer")
st.markdown(
    "See how the transformer variants differ, from BERT to T5 and BigBird: **structure** "
    "(layer trees and parameter breakdowns, built from each configuration without weights), **cost** "
    "(memory, FLOPs, scaling with length), **what each is trained to predict**, **how it tokenizes**, "
    "**who attends to whom**, and **live predictions** from real models side by side."
)
with ui.guard():
    frame = cache.catalog_frame()
    family = st.segmented_control("Family", ["encoder", "decoder", "encoder-decoder"], selection_mode="multi",
                                  default=["encoder", "decoder", "encoder-decoder"], key="home_family")
    shown = frame[frame["family"].isin(family or [])]
    fig = px.scatter(shown, x="year", y="params", color="family", text="name", log_y=True,
                     hover_data=["objectives", "attention"], title="Parameters of every variant by year")
    fig.update_traces(textposition="top center", textfont_size=9)
    ui.figure(fig, "variants-by-year", height=560)
    st.dataframe(shown.assign(params=shown["params"].map(ui.human)), hide_index=True,
                 column_config={"paper": st.column_config.LinkColumn("paper")})
    ui.csv_download(shown, "catalog", key="dl_catalog")
