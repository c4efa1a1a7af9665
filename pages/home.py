"""Overview: what the tool is, every variant by publication date, and who builds on whom."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app import ui
from app.caches import architecture as cache
from app.caches import overview as cache_overview
from explorer.architecture import catalog
from explorer.plots import overview as plots

ARCHITECTURE_PAGE = Path(__file__).with_name("architecture.py")

st.title("Transformer Explorer")
st.markdown(
    "See how the transformer variants differ, from BERT to T5 and BigBird: **structure** "
    "(layer trees and parameter breakdowns, built from each configuration without weights), **cost** "
    "(memory, FLOPs, scaling with length), **what each is trained to predict**, **how it tokenizes**, "
    "**who attends to whom**, **what each bought** on the papers' benchmarks, and **live predictions** "
    "from real models side by side."
)


def open_in_architecture(key: str) -> None:
    st.switch_page(ARCHITECTURE_PAGE, query_params={"model": key})


with ui.guard():
    frame = cache.catalog_frame()
    family = st.segmented_control("Family", ["encoder", "decoder", "encoder-decoder"], selection_mode="multi",
                                  default=["encoder", "decoder", "encoder-decoder"], key="home_family")
    shown = frame[frame["family"].isin(family or [])].assign(date=lambda f: f["key"].map(cache_overview.dates()))
    ui.figure(plots.params_by_date_figure(shown.to_dict("records")), "variants-by-date", height=520)

    st.subheader("Lineage")
    st.caption("Each variant at its publication month, linked to what it builds on. Hover an edge's diamond "
               "for the relation; click a variant to open it in the Architecture explorer.")
    # st.plotly_chart directly (not ui.figure): the tree needs on_select to open the clicked variant
    event = st.plotly_chart(plots.lineage_figure(cache_overview.family_tree()), key="home_lineage",
                            on_select="rerun", selection_mode="points", width="stretch",
                            config={"displaylogo": False, "toImageButtonOptions": {
                                "format": st.session_state.get("export_format", "png"), "filename": "lineage"}})
    picked = [str(p.get("customdata")) for p in event.selection.points if p.get("customdata") in catalog.keys()]
    if picked:
        open_in_architecture(picked[0])
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    key = left.selectbox("Or pick a variant", catalog.keys(), key="home_open",
                         format_func=lambda k: catalog.get_variant(k).name)
    if right.button("Open in the Architecture explorer", key="home_open_go", icon=":material/account_tree:"):
        open_in_architecture(key)

    st.subheader("Every variant")
    st.dataframe(shown.drop(columns="date").assign(params=shown["params"].map(ui.human)), hide_index=True,
                 column_config={"paper": st.column_config.LinkColumn("paper")})
    ui.csv_download(shown.drop(columns="date"), "catalog", key="dl_catalog")
