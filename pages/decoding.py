"""Decoding lab: a real decoder's next-token distribution, and strategies generating side by side."""

from __future__ import annotations

import streamlit as st

from app import ui
from app.caches import generation as cache
from app.caches import objectives as cache_objectives
from app.views import device_picker, served_picker
from app.views import generation as view
from explorer.core.errors import ExplorerError
from explorer.objectives import decoding as toy
from explorer.plots import objectives as toy_plots
from explorer.runtime.resolve import resolve
from explorer.serving import backend
from explorer.serving.backend import Backend
from explorer.tasks.generation import STRATEGIES, DecodingSettings
from explorer.tasks.generation.strategy import MAX_BEAMS, MAX_PROMPT_TOKENS, MAX_TOP_K

DEFAULT_MODEL = "gemma3-270m"
EXAMPLE = "The capital of France is"
LAB_MAX = 60  # tokens the lab generates at most (the decoders' max_new_tokens)


def toy_fallback() -> None:
    """The hand-made table of the Objectives page: decoding without any model."""
    st.markdown(f"**Meanwhile, a toy next-token table** for *{toy.EXAMPLE_CONTEXT} …* (no model needed):")
    with ui.guard():
        result = cache_objectives.decode(tuple(toy.EXAMPLE_TABLE.items()), "sample", 1.0, 3, 0, 2000)
        ui.figure(toy_plots.decoding_figure(result), "decoding-toy")


def set_steps(value: int) -> None:
    st.session_state["dec_steps"] = max(1, min(value, LAB_MAX))
    st.session_state["dec_pending"] = True  # the buttons wait (disabled) until these tokens exist


def step_once() -> None:
    """+1 from the count now (not the one the button was drawn with): no click is lost to a rerun."""
    set_steps(st.session_state["dec_steps"] + 1)


def buttons(live: bool, pending: bool = False) -> None:
    """Step / Run to N / Reset. Until the run's last element they are disabled look-alikes (other keys),
    so a click cannot land while the page is busy: two clicks between the script's checkpoints merge
    into one rerun (Streamlit coalesces them) and one would be lost."""
    b1, b2, b3 = st.columns(3)
    if not live:
        labels = ("Still running…" if pending else "Step (+1 token)", f"Run to {n}", "Reset")
        for col, label, key in zip((b1, b2, b3), labels, ("step", "run", "reset"), strict=True):
            col.button(label, key=f"dec_wait_{key}", disabled=True, width="stretch")
        return
    b1.button("Step (+1 token)", key="dec_step", on_click=step_once, width="stretch")
    b2.button(f"Run to {n}", key="dec_run", on_click=set_steps, args=(n,), type="primary", width="stretch")
    b3.button("Reset", key="dec_reset", on_click=set_steps, args=(1,), width="stretch")


where = device_picker.pick().kwargs()  # the sidebar's device and precision, part of every cache key
st.title("Decoding lab")
st.caption("A real decoder (Gemma 3 270M, bundled offline) predicts a distribution over its whole vocabulary; "
           "a decoding strategy turns it into text, one token at a time.")

model = st.text_input("Model (catalog key or a causal-LM directory)", key="dec_model",
                      value=st.query_params.get("model", DEFAULT_MODEL)).strip() or DEFAULT_MODEL
st.query_params["model"] = model  # read on open above: a reload or a shared link keeps the typed model
bar = st.empty()
try:  # the first use converts the bundled GGUF once, with a progress bar
    cache.prepared(model, _progress=lambda f, what: bar.progress(min(max(f, 0.0), 1.0),
                                                               text=f"Preparing {model} (once): {what}"),
                   **where)
except ExplorerError as err:
    bar.empty()
    st.warning(ui.markdown_safe(str(err)), icon=":material/cloud_off:")
    toy_fallback()
    st.stop()
bar.empty()

served = served_picker.pick("dec", "top_k", "next-token tables and decoding")
# one road for every column; the model resolved once, after its conversion
models: list[Backend] = [backend.decoder(resolve(model), **where), *map(backend.served, served)]
prompt = st.text_area("Prompt", value=EXAMPLE, key="dec_prompt", height=90,
                      help=f"Long prompts are cut to their last {MAX_PROMPT_TOKENS:,} tokens on a CPU; on a GPU to "
                           "the model's context where its KV caches fit (the notice says which limit applied).")
k = st.slider("Rows in the next-token table", 5, 30, 10, key="dec_k")
next_area = st.container()  # the next-token table: filled once the buttons wait (below)

st.subheader("Generate one token at a time")
strategies = st.multiselect("Strategies (same prompt, same seed)", STRATEGIES, key="dec_strategies",
                            default=ui.query_list("strategies", STRATEGIES, STRATEGIES))
c1, c2, c3, c4, c5 = st.columns(5)
temperature = c1.slider("Temperature (0 = greedy)", 0.0, 2.0, 0.8, 0.1, key="dec_temp")
top_k = int(c2.number_input("k (top-k)", 1, MAX_TOP_K, 40, key="dec_topk"))
top_p = c3.slider("p (top-p)", 0.05, 1.0, 0.9, 0.05, key="dec_topp")
beams = int(c4.number_input("Beams", 1, MAX_BEAMS, ui.query_int("beams", 4, 1, MAX_BEAMS), key="dec_beams"))
seed = int(c5.number_input("Seed", 0, 2**31 - 1, ui.query_int("seed", 0, 0, 2**31 - 1), key="dec_seed"))
n = st.slider("Run to N tokens", 1, LAB_MAX, ui.query_int("n", 20, 1, LAB_MAX), key="dec_n")
ui.set_query_list("strategies", strategies)
st.query_params["n"], st.query_params["seed"], st.query_params["beams"] = str(n), str(seed), str(beams)

st.session_state.setdefault("dec_steps", 1)
pending = bool(st.session_state.pop("dec_pending", False) and strategies)
slot = st.empty()  # disabled look-alikes while the page runs; the live buttons are drawn last (finally)
with slot.container():
    buttons(live=False, pending=pending)
try:
    with next_area:
        for i, m in enumerate(models):  # each column in its own guarded panel
            view.next_token_panel(m, prompt, k, i)
    if not strategies:
        st.info("Pick at least one strategy.", icon=":material/info:")
    elif prompt.strip():  # an empty prompt: the next-token box above already says so (one message, not two)
        settings = [DecodingSettings(s, temperature, top_k, top_p, beams, LAB_MAX, seed) for s in strategies]
        fast = view.fast_toggle(models)
        for i, m in enumerate(models):
            view.generation_panel(m, prompt, settings, st.session_state["dec_steps"], fast, i, details=i == 0)
finally:
    with slot.container():
        buttons(live=True)
ui.page_link("why.py", "Explain this prediction", text=prompt, target="", models=model)
