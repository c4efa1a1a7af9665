"""Sentence similarity (placeholder until its issue lands)."""

import streamlit as st

st.title("Sentence similarity")
st.info("This page is not built yet.")
