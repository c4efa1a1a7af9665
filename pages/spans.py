"""Spans & QA (placeholder until its issue lands)."""

import streamlit as st

st.title("Spans & QA")
st.info("This page is not built yet.")
