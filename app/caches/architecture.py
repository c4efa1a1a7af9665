"""Cached wrappers for the architecture explorer, comparator and overview (hashable args only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from app import ui
from explorer.architecture import catalog, census

if TYPE_CHECKING:
    from explorer.architecture import analysis, compare

# torch is imported by the first wrapper that builds a model, not by this module: the overview
# page needs only the catalog and the cached counts, and renders before torch has loaded.


@st.cache_data(max_entries=64, show_spinner="Building the model on the meta device...")
def analyse_variant(key: str, seq_len: int, overrides: tuple[tuple[str, int], ...] = (),
                    share_layers: bool = False) -> analysis.Analysis:
    from explorer.architecture import analysis

    return analysis.analyse_variant(key, seq_len=seq_len, overrides=dict(overrides), share_layers=share_layers)


@st.cache_data(max_entries=16, show_spinner="Building your configuration...")
def analyse_upload(data: bytes, name: str, seq_len: int, overrides: tuple[tuple[str, int], ...] = (),
                   share_layers: bool = False) -> analysis.Analysis:
    from explorer.architecture import analysis, build

    config = build.apply_overrides(build.parse_config_json(data), dict(overrides))
    return analysis.analyse_config(config, name=name, seq_len=seq_len, share_layers=share_layers)


@st.cache_data(max_entries=32, show_spinner="Analysing the variants...")
def compare_variants(keys: tuple[str, ...], seq_len: int) -> compare.Comparison:
    from explorer.architecture import compare

    return compare.compare(keys, seq_len=seq_len)


@st.cache_data(max_entries=1, show_spinner=False)
def catalog_frame() -> pd.DataFrame:
    """Every variant with its parameter count (a progress bar while counts are computed)."""
    bar = st.progress(0.0, text="Counting the parameters of every variant (first run only)...")
    counts = census.catalog_params(ui.progress_to(bar))
    bar.empty()
    rows = []
    for v in catalog.load_catalog().values():
        rows.append({"key": v.key, "name": v.name, "family": v.family, "year": v.year,
                     "params": counts[v.key], "objectives": ", ".join(v.objectives),
                     "attention": v.attention, "positions": v.positions, "checkpoint": v.reference_checkpoint,
                     "paper": v.paper})
    return pd.DataFrame(rows)


@st.cache_data(max_entries=64)
def config_summary(key: str) -> dict:
    from explorer.architecture import build, compare

    return compare.config_summary(build.make_config(key))
