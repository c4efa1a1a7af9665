"""Cached wrappers of the Overview: the lineage graph and publication dates (hashable args only)."""

from __future__ import annotations

import streamlit as st

from explorer.architecture import lineage


@st.cache_data(max_entries=1, show_spinner=False)
def family_tree() -> lineage.Lineage:
    return lineage.lineage()


@st.cache_data(max_entries=1, show_spinner=False)
def dates() -> dict[str, float]:
    return lineage.dates()
