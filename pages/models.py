"""Models & weights (placeholder until its issue lands)."""

import streamlit as st

st.title("Models & weights")
st.info("This page is not built yet.")
