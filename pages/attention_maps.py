"""Attention maps (placeholder until its issue lands)."""

import streamlit as st

st.title("Attention maps")
st.info("This page is not built yet.")
