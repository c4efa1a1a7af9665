"""Compare variants (placeholder until its issue lands)."""

import streamlit as st

st.title("Compare variants")
st.info("This page is not built yet.")
