"""Fill-mask (placeholder until its issue lands)."""

import streamlit as st

st.title("Fill-mask")
st.info("This page is not built yet.")
