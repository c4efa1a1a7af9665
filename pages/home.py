"""Overview (placeholder until its issue lands)."""

import streamlit as st

st.title("Overview")
st.info("This page is not built yet.")
