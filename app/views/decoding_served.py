"""The Decoding lab's served-model panels: the same table, tokens and curves as the local model's, per endpoint.

Each panel is guarded on its own: a server that is down or refuses shows one message in its panel and the rest
of the page (the local model, other endpoints) goes on.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from app import ui
from app.caches import serving as cache_serving
from app.views import device_picker
from explorer.plots import generation as plots
from explorer.serving.endpoints import Endpoint
from explorer.tasks.generation import DecodingSettings


def next_token_panel(ep: Endpoint, prompt: str, k: int) -> None:
    """The served model's next-token table beside the local one."""
    with st.container(border=True), ui.guard():
        st.markdown(f"**{ui.markdown_safe(ep.shown)}** (served)")
        nxt = cache_serving.next_token(ep, prompt, k)
        ui.notices(nxt.notices)
        st.caption(f"{nxt.prompt_tokens} prompt tokens (the server's tokenizer) · {device_picker.ran_caption(nxt)}.")
        left, right = st.columns([2, 3])
        left.dataframe(pd.DataFrame([{"token": c.token, "log-probability": round(c.logit, 6),
                                      "probability": round(c.probability, 8)} for c in nxt.candidates]),
                       hide_index=True, key=f"dec_served_table_{ep.name}")
        with right:
            ui.figure(plots.next_token_figure(nxt), f"next-token-{ep.name}", key=f"dec_served_fig_{ep.name}")


def generation_panel(ep: Endpoint, prompt: str, settings: list[DecodingSettings], steps: int, fast: bool) -> None:
    """Each strategy's tokens from the served model: step by step from the client (every step's alternatives),
    or, in fast mode, one request per strategy for the whole continuation (no beam search there)."""
    with st.container(border=True), ui.guard():
        st.markdown(f"**{ui.markdown_safe(ep.shown)}** (served)")
        if fast:
            skipped = [s.strategy for s in settings if s.effective_strategy == "beam"]
            gens = [cache_serving.fast_generation(ep, prompt, replace(s, max_new_tokens=steps))
                    for s in settings if s.effective_strategy != "beam"]
            if skipped:
                st.caption("Beam search is not in one server request: untick fast mode to run it step by step.")
        else:
            gens = [cache_serving.generation(ep, prompt, s, steps) for s in settings]
        if not gens:
            return
        ui.notices((note for g in gens for note in g.notices), ("stopped", "truncated"))
        how = "one request per strategy" if fast else "one request per step (per beam for beam search)"
        st.caption(f"{steps} token(s) per strategy, {how} · {device_picker.ran_caption(gens[0])}.")
        for g in gens:
            st.text(f"{g.settings.strategy:>7}: {g.prompt}{g.text}")
        ui.figure(plots.tokens_figure(gens), f"generated-tokens-{ep.name}", key=f"dec_served_tokens_{ep.name}")
