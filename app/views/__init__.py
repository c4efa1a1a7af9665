"""Drawing: one module per area turns a library result into Streamlit elements and figures (and the sidebar's
device and served-model pickers); no computation, every number comes from the library."""
