"""The Decoding lab's columns, one per model (here or served): its next-token table and its strategies' tokens.

Every column is drawn the same way from the same results (:mod:`app.caches.generation`, keyed by the backend), and
guarded on its own: a server that is down or refuses shows one message in its column and the rest of the page
(the other models) goes on. Only the captions differ, saying what the numbers are and where they were computed.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from app import ui
from app.caches import generation as cache
from app.views import device_picker
from explorer.plots import generation as plots
from explorer.serving.backend import Backend
from explorer.tasks.generation import DecodingSettings, Generation, NextToken
from explorer.tasks.generation.steps import step_table

# how a column's decoder takes a step, for its caption
STEPPING = {True: "each step feeds only the new token (the prompt's keys and values stay in the KV cache)",
            False: "one request per step (per beam for beam search)"}


def _title(model: Backend) -> None:
    st.markdown(f"**{ui.markdown_safe(model.shown)}**")


def _facts(nxt: NextToken) -> str:
    """What the table holds: a model run here gives its whole distribution; a server its own top tokens."""
    if not nxt.vocab_size:
        return f"{nxt.prompt_tokens} prompt tokens (the server's tokenizer)"
    tied = "is" if nxt.tied_output else "is not"
    return (f"{nxt.prompt_tokens} prompt tokens · vocabulary {nxt.vocab_size:,} · the output layer {tied} the input "
            "embedding matrix (checked on the loaded tensors)")


def _rows(nxt: NextToken) -> list[dict[str, object]]:
    """The table: ids and logits from a whole distribution; a server sends neither, only log-probabilities."""
    if nxt.vocab_size:
        return [c.to_dict() for c in nxt.candidates]
    return [{"token": c.token, "log-probability": round(c.logit, 6), "probability": round(c.probability, 8)}
            for c in nxt.candidates]


def next_token_panel(model: Backend, prompt: str, k: int, i: int = 0) -> None:
    """The ``i``-th model's next-token table and bars."""
    with st.container(border=True), ui.guard():
        _title(model)
        nxt = cache.next_token(model, prompt, k)
        ui.notices(nxt.notices)
        st.caption(f"{_facts(nxt)} · {device_picker.ran_caption(nxt)}.")
        left, right = st.columns([2, 3])
        left.dataframe(pd.DataFrame(_rows(nxt)), hide_index=True, key=f"dec_table_{i}")
        with right:
            ui.figure(plots.next_token_figure(nxt), "next-token" + (f"-{i}" if i else ""), key=f"dec_next_fig_{i}")


def fast_toggle(models: list[Backend]) -> bool:
    """Whether the models that can write a whole continuation in one request do (asked only when one can)."""
    if not any(m.why_not("fast") is None for m in models):
        return False
    return st.toggle("Served models: one request per continuation (fast; the server samples)",
                     key="dec_served_fast", help="Off: the client asks for every step's alternatives and "
                     "decodes itself, as the local lab does (beam search included).")


def _generations(model: Backend, prompt: str, settings: list[DecodingSettings], steps: int,
                 fast: bool) -> list[Generation]:
    if not fast:
        return [cache.generation(model, prompt, s, steps) for s in settings]
    if any(s.effective_strategy == "beam" for s in settings):
        st.caption("Beam search is not in one server request: untick fast mode to run it step by step.")
    return [cache.fast_generation(model, prompt, replace(s, max_new_tokens=steps))
            for s in settings if s.effective_strategy != "beam"]


def generation_panel(model: Backend, prompt: str, settings: list[DecodingSettings], steps: int, fast: bool,
                     i: int = 0, details: bool = False) -> None:
    """The ``i``-th model's tokens per strategy: step by step (every step's alternatives), or, in fast mode and
    where the model can, one request per strategy for the whole continuation (no beam search there). ``details``
    (the page's own model) adds the repetition curves and every step as a table."""
    with st.container(border=True), ui.guard():
        _title(model)
        fast = fast and model.why_not("fast") is None
        gens = _generations(model, prompt, settings, steps, fast)
        if not gens:
            return
        ui.notices((note for g in gens for note in g.notices), ("stopped",))
        how = "one request per strategy" if fast else STEPPING[model.in_process]
        st.caption(f"{steps} token(s) per strategy, {how} · {device_picker.ran_caption(gens[0])}.")
        for g in gens:
            st.text(f"{g.settings.strategy:>7}: {g.prompt}{g.text}")
        suffix = f"-{i}" if i else ""
        ui.figure(plots.tokens_figure(gens), f"generated-tokens{suffix}", key=f"dec_tokens_fig_{i}")
        if details:
            _details(gens)


def _details(gens: list[Generation]) -> None:
    ui.figure(plots.repetition_figure(gens), "repetition", key="dec_repetition_fig")
    with st.expander("Every step as a table"):
        pick = st.selectbox("Strategy", [g.settings.strategy for g in gens], key="dec_table_pick")
        rows = step_table(next(g for g in gens if g.settings.strategy == pick).steps)
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        ui.csv_download(pd.DataFrame(rows), f"decoding-{pick}", key="dec_csv")
