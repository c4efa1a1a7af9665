"""Tokenizers (placeholder until its issue lands)."""

import streamlit as st

st.title("Tokenizers")
st.info("This page is not built yet.")
