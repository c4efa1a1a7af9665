"""Objectives (placeholder until its issue lands)."""

import streamlit as st

st.title("Objectives")
st.info("This page is not built yet.")
