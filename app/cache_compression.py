"""Cached wrapper of the compression lab (the page calls this, never the library directly).

The study is ``st.cache_data`` (hashable arguments, bounded): the same model, methods, device and prompt
answer from the cache. The original model comes from ``explorer.runtime.loading``'s one process-wide
cache (never a second reference here); the compressed copies live only while they are measured.
The progress bar is drawn inside the cached function (Streamlit replays elements made there; one made
by the page outside could not be replayed) and emptied when the study is done.
"""

from __future__ import annotations

import streamlit as st

from explorer.compression import study
from explorer.runtime import workers


@st.cache_data(max_entries=16, show_spinner=False)
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def compression_study(model: str, methods: tuple[str, ...], prompt: str, device: str = "auto") -> study.Study:
    """``model`` and a compressed copy per method, measured beside each other on ``device``."""
    bar = st.progress(0.0, text="Starting…")
    try:
        return study.run(model, list(methods), device=device, prompt=prompt,
                         progress=lambda f, text: bar.progress(min(max(f, 0.0), 1.0), text=text))
    finally:
        bar.empty()
