"""Compression lab: quantize or prune a copy of a real model, and measure what it buys and costs."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import ui
from app.caches import compression as cache
from app.caches import models as cache_models
from app.views import device_picker
from explorer.compression import offer
from explorer.compression.earlyexit import DEFAULT_PASSAGE
from explorer.compression.methods import canonical
from explorer.compression.study import DEFAULT_CANDIDATES, DEFAULT_PROMPTS
from explorer.core import limits
from explorer.plots import compression as plots

MODELS = {"sentence-bert": "all-MiniLM-L6-v2 (encoder, 23M)", "gemma3-270m": "Gemma 3 270M (decoder, bundled Q4_K_M)"}
MODES = ["FastBERT early exit", "Compressed copies"]  # what a lab model trained with exits is measured for
RAN = "_compression_ran"  # the last study asked for: reruns redraw it from the cache

where = device_picker.pick()
st.title("Compression lab")
st.caption("Each method works on a copy of the loaded model (the original is never changed) and is measured "
           "beside it: size on disk, latency on this device, and agreement with the original's outputs. Early exit "
           "(exit-S) runs the FastBERT exits a Pretraining-lab model was trained with.")

folder = cache_models.models_dir()
exit_models = {k: f"{v} · FastBERT exits" for k, v in cache_models.lab_models("exits", folder).items()}
lab = cache_models.lab_models("fill", folder)  # the lab's masked and causal LMs: every method, mheads-N with their loss
choices = {**MODELS, **lab, **exit_models}
ui.seed_from_url("cmp_model", "model", list(choices))
model = st.selectbox("Model", list(choices), format_func=choices.__getitem__, key="cmp_model")
st.query_params["model"] = model
early = False
if model in exit_models:
    ui.seed_from_url("cmp_mode", "mode", MODES)
    early = st.radio("Measure", MODES, horizontal=True, key="cmp_mode") == MODES[0]
    st.query_params["mode"] = MODES[0] if early else MODES[1]
if not exit_models:
    st.caption("Early exit (FastBERT): train a model in the Pretraining lab with \"Also train FastBERT exits\" "
               "ticked and Save it; it then appears in this list with the exit-S methods.")
decoder = cache.measured_as_decoder(model, folder)
# mheads-N ranks heads by the model's own (masked) LM loss, which MiniLM's sentence encoder lacks
offered = offer.offered(exits=early, with_loss=model != "sentence-bert")
default = list(offer.EXIT_DEFAULTS if early else offer.DEFAULTS)
# methods typed by whoever shared the link (prune-70) come back as options of their own kind
linked = [c for v in str(st.query_params.get("methods", ""))[:500].split(",") if (c := canonical(v))]
offered = offered + [c for c in dict.fromkeys(linked) if c not in offered and c.startswith("exit-") == early]
methods = st.multiselect(
    "Methods", offered, default=ui.query_list("methods", default, offered),
    key="cmp_methods_exit" if early else "cmp_methods", accept_new_options=True,
    help=("Type exit-S for another speed (0-1): higher exits sooner. " if early else
          "Type prune-N or heads-N for another percentage (0-99). ") + offer.describe())
ui.set_query_list("methods", [c for m in methods if (c := canonical(m))])  # typed ones too, if valid
if early:
    prompt = st.text_area("Passage to classify", value=DEFAULT_PASSAGE, key=f"cmp_prompt_{model}",
                          max_chars=limits.EARLY_EXIT_PASSAGE_CHARS,
                          help="Library reference or narrative docs? Each speed answers after the layer it exits at.")
else:
    prompt = st.text_input("Prompt for the side-by-side answers",
                           value=DEFAULT_PROMPTS["decoder" if decoder else "encoder"], key=f"cmp_prompt_{model}",
                           help="A decoder continues it greedily; an encoder ranks the candidate sentences by "
                                "similarity to it.")
if early:
    st.caption("Each speed S runs the layers one at a time and answers at the first layer whose classifier is sure "
               "enough (normalised entropy below S); S = 0 is the full model.")
elif not decoder:
    st.caption("Candidates: " + " · ".join(DEFAULT_CANDIDATES))
elif model == "gemma3-270m":
    st.caption("Gemma on two CPU cores takes a minute or more a method. Each method is one request: one that runs "
               "past the server's time budget (EXPLORER_REQUEST_SECONDS) is stopped with a note, and the methods "
               "measured before it stay. The command line has no limit: python -m explorer compress gemma3-270m.")

asked = (model, early, tuple(methods), prompt, where.device)
if st.button("Run", type="primary", key="cmp_run"):
    st.session_state[RAN] = asked
if st.session_state.get(RAN) != asked:
    st.info("Pick a model and methods, then press Run.", icon=":material/play_arrow:")
    st.stop()

result = None
bar = st.progress(0.0, text="Starting…")
with ui.guard():  # a bad method or a request out of time: a box (a later method out of time: a note, the rest stay)
    result = cache.run(model, tuple(methods), prompt, where.device, folder, ui.progress_to(bar))
bar.empty()
if result is None:
    st.stop()

ui.notices(result.notices)
st.caption(f"{result.name} · {device_picker.ran_caption(result)} · "
           f"original {plots.megabytes(result.baseline.size_bytes)} on disk · "
           f"quality: {result.baseline.quality.metric}")
ui.figure(plots.tradeoff_figure(result), "compression_tradeoff", key="cmp_fig")

table = pd.DataFrame(plots.table_rows(result))
st.dataframe(table, hide_index=True, width="stretch")
ui.csv_download(table, "compression", key="cmp_csv")

st.subheader("Answers on one prompt")
st.caption(("Passage: " if early else "Prompt: " if decoder else "Candidates ranked by similarity to: ")
           + ui.markdown_safe(result.prompt))
answers = pd.DataFrame(plots.answer_rows(result))
st.dataframe(answers, hide_index=True, width="stretch")
