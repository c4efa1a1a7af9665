"""Cached wrapper of the compression lab (the page calls this, never the library directly).

One cached call per method (``st.cache_data``, hashable arguments, bounded): each method is its own
request with its own time budget (:mod:`explorer.runtime.cancel`), a method measured once answers from
the cache when the page asks again with more methods, and the page draws the progress bar between calls.
The original model comes from ``explorer.runtime.loading``'s one process-wide cache (never a second
reference here); each compressed copy lives only while it is measured. A request stopped by its budget
raises (nothing is cached) and the page says so.
"""

from __future__ import annotations

import streamlit as st

from explorer.compression import study
from explorer.runtime import modelkind, workers


@st.cache_data(max_entries=32, show_spinner=False, ttl=60)
def measured_as_decoder(model: str, models_dir: str | None = None) -> bool:
    """Whether the study measures ``model`` as a decoder (the library's one rule, :mod:`explorer.runtime.modelkind`)."""
    return modelkind.is_decoder(model, models_dir)


@st.cache_data(max_entries=64, show_spinner=False)
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def one_method(model: str, method: str, prompt: str, device: str = "auto", models_dir: str | None = None) -> study.Study:
    """``model`` and a compressed copy by ``method`` (or its early exit), measured beside each other on ``device``."""
    return study.run(model, [method], device=device, prompt=prompt, models_dir=models_dir)
