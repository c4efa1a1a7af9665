"""Architecture explorer (placeholder until its issue lands)."""

import streamlit as st

st.title("Architecture explorer")
st.info("This page is not built yet.")
