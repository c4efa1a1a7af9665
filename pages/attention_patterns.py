"""Sparse patterns (placeholder until its issue lands)."""

import streamlit as st

st.title("Sparse patterns")
st.info("This page is not built yet.")
