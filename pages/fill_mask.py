"""Fill-mask side by side, and ELECTRA's generator/discriminator at work."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from app import cache_models as cache
from app import device_picker, ui
from app import fillmask_view as view
from explorer.core.errors import ExplorerError
from explorer.core.labels import UNTRAINED_NOTE
from explorer.plots import fillmask as plots
from explorer.runtime import weights
from explorer.tasks import fillbatch, fillmask
from explorer.tasks.fillmask import PRESETS

where = device_picker.pick().kwargs()  # the sidebar's device and precision, part of every cache key
st.title("Fill-mask, side by side")
st.caption("Type a prompt with [MASK] (or <mask>, or ___) where a word is missing: every model gets it with "
           "its own mask token and answers in its column. Several prompts, one per line, give one row per "
           "prompt. Models without weights on disk can run with untrained (random) weights, clearly "
           "labelled, so their code path is still visible.")


def _use_preset() -> None:
    st.session_state["fm_text"] = st.session_state["fm_preset"]


presets = [p for group in PRESETS.values() for p in group]
st.selectbox("Probing prompts (what does pretraining teach?)", presets, index=None, key="fm_preset",
             on_change=_use_preset, placeholder="Pick a preset: trivia, syntax, coreference, bias…",
             format_func=lambda p: f"{next(g for g, ps in PRESETS.items() if p in ps)}: {p}")
st.session_state.setdefault("fm_text", presets[0])
prompt = st.text_area("Prompt (several: one per line)", key="fm_text", height=90, max_chars=100_000,
                      help=f"Up to {cache.prompt_limit(where['device'])} prompts, one per line; blank lines are skipped.")

keys = cache.fill_keys()  # the bundled decoder (gemma3-270m: a causal column) and the masked LMs
c1, c2, c3 = st.columns([3, 2, 1])
most, most_why = cache.page_model_limit(where["device"])  # 8 on a CPU; more where a GPU's memory allows
default = ui.query_list("models", cache.default_fill_models(cache.models_dir()), keys, limit=most)
picked = c1.multiselect("Models", keys, default=default, key="fm_models", max_selections=most,
                        help=f"At most {most} models a request ({most_why}).")
paths = c2.text_input("Local model directories (comma-separated)", key="fm_paths",
                      help="Any directory saved with save_pretrained (model + tokenizer).")
top_k = c3.slider("Top-k", 1, 20, 5, key="fm_topk")
allow_random = st.toggle("Untrained weights for models whose weights are not on disk", value=True,
                         key="fm_random", help="Random weights built from the published config: the "
                         "predictions are noise, but the code path is real. Labelled 'untrained'.")
answer_tokens = st.slider("Decoder answer length (tokens)", 1, 4, 1, key="fm_decoder_tokens",
                          help="The decoder may answer with several tokens (a number, a name), found by a "
                               "short beam over continuations of the text before the blank.") if any(
    fillmask.model_kind(m) == "causal-lm" for m in picked) else 1
ui.set_query_list("models", picked)
directory = cache.models_dir()
specs = list(dict.fromkeys([*picked, *(p.strip() for p in paths.split(",") if p.strip())]))

valid, fills, started = False, [], time.perf_counter()
several = fillbatch.is_batch(prompt)  # one prompt per line: a table with a row per prompt
with ui.guard():  # one message for a bad prompt, not one per model (each line is checked on its own)
    valid = several or bool(fillmask.clean_text(prompt))
if valid and specs:
    with ui.guard(), st.spinner(f"Running {len(specs)} model(s)…"):
        plans = {s: weights.plan(s, directory, allow_random) for s in specs}
        stamps = tuple(p.stamp for p in plans.values())
        if several:
            many = cache.fill_many(tuple(specs), prompt, int(top_k), allow_random, directory, stamps,
                                   int(answer_tokens), cache.prompt_limit(where["device"]), **where)
            view.batch(many, plans, (time.perf_counter() - started) * 1000)
        else:
            result = cache.fill(tuple(specs), prompt, int(top_k), allow_random, directory, stamps,
                                int(answer_tokens), **where)
            fills = list(result.models)
            view.model_errors(result.errors, plans, result.skipped)
if fills:
    view.columns(fills, (time.perf_counter() - started) * 1000)
elif valid and not specs:
    st.info("Pick at least one model, or type a directory.", icon=":material/info:")
st.caption("The bundled all-MiniLM-L6-v2 (`sentence-bert`) was trained for sentence embeddings and ships "
           "without its masked-LM head, so it cannot fill masks; type `sentence-bert` above to see the check.")

st.header("ELECTRA: generator and discriminator", divider="gray")
st.caption("The small generator fills the masks (by sampling, as in pretraining); the discriminator reads the "
           "result and gives, for every token, the probability that it was replaced.")
pairs = cache.electra_pairs()
e1, e2, e3 = st.columns([2, 1, 1])
pair = e1.selectbox("ELECTRA pair", list(pairs), key="el_pair")
fraction = e2.slider("Share of tokens to mask (without [MASK] in the text)", 0.0, 0.5, 0.15, 0.05, key="el_frac")
seed = int(e3.number_input("Seed", 0, 10_000, 0, key="el_seed"))
sentence = st.text_input("Sentence", "The chef cooked the meal and everyone enjoyed it.", key="el_text")
gen, disc = pairs[pair] if pair else (None, None)
el_plans = [weights.plan(k, directory, allow_random) for k in (gen, disc) if k]
for absent in (p for p in el_plans if p.missing and not p.random_weights):  # how to get them, not a failure
    st.warning(ui.markdown_safe(absent.reason), icon=":material/cloud_download:")
with ui.guard(), st.spinner("Generator and discriminator at work…"):
    if pair is None:
        raise ExplorerError("The catalog has no ELECTRA pair.")
    if any(p.missing and not p.random_weights for p in el_plans):
        st.stop()  # the warnings above say how to get the weights
    res = cache.electra(gen, disc, sentence, float(fraction), seed, allow_random, directory,
                        tuple(p.stamp for p in el_plans), **where)
    if res.untrained:
        st.warning(UNTRAINED_NOTE, icon=":material/casino:")
    for note in res.notices:
        st.info(note.text, icon=view.ICONS.get(note.kind, ":material/info:"))
    st.caption(f"{sum(res.replaced)} of {len(res.tokens)} tokens replaced · accuracy at 0.5: {res.accuracy:.0%} "
               f"· {device_picker.ran_caption(res)} · {res.latency_ms:.0f} ms")
    ui.figure(plots.replaced_strip(res), "electra_replaced", key="el_fig")
    table = pd.DataFrame({"original": res.original, "input": res.tokens, "replaced": res.replaced,
                          "P(replaced)": res.probability})
    st.dataframe(table, hide_index=True, width="stretch")
    ui.csv_download(table, "electra_replaced", key="el_csv")
