"""Fill-mask side by side, and ELECTRA's generator/discriminator at work."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from app import cache_models as cache
from app import ui
from explorer import fillmask, weights
from explorer.errors import ExplorerError
from explorer.fillmask import PRESETS
from explorer.labels import UNTRAINED_NOTE, escape_markdown
from explorer.plots import fillmask as plots

ICONS = {"truncated": ":material/content_cut:", "fallback": ":material/memory:", "offload": ":material/hard_drive:", "untrained": ":material/casino:"}

st.title("Fill-mask, side by side")
st.caption("Type one prompt with [MASK] (or <mask>, or ___) where a word is missing: every model gets it with "
           "its own mask token and answers in its column. Models without weights on disk can run with "
           "untrained (random) weights, clearly labelled, so their code path is still visible.")


def _use_preset() -> None:
    st.session_state["fm_text"] = st.session_state["fm_preset"]


presets = [p for group in PRESETS.values() for p in group]
st.selectbox("Probing prompts (what does pretraining teach?)", presets, index=None, key="fm_preset",
             on_change=_use_preset, placeholder="Pick a preset: trivia, syntax, coreference, bias…",
             format_func=lambda p: f"{next(g for g, ps in PRESETS.items() if p in ps)}: {p}")
st.session_state.setdefault("fm_text", presets[0])
prompt = st.text_area("Prompt", key="fm_text", height=90, max_chars=100_000)

keys = cache.fill_keys()  # the bundled decoder (gemma3-270m: a causal column) and the masked LMs
c1, c2, c3 = st.columns([3, 2, 1])
default = ui.query_list("models", cache.default_fill_models(cache.models_dir()), keys, limit=fillmask.MAX_PAGE_MODELS)
picked = c1.multiselect("Models", keys, default=default, key="fm_models", max_selections=fillmask.MAX_PAGE_MODELS)
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
with ui.guard():  # one message for a bad prompt, not one per model
    valid = bool(fillmask.clean_text(prompt))
if valid and specs:
    with ui.guard(), st.spinner(f"Running {len(specs)} model(s)…"):
        plans = {s: weights.plan(s, directory, allow_random) for s in specs}
        result = cache.fill(tuple(specs), prompt, int(top_k), allow_random, directory,
                            tuple(p.stamp for p in plans.values()), int(answer_tokens))
        fills = list(result.models)
        for spec, message in result.errors:  # the other models still answer; missing weights are no failure
            show = st.warning if plans[spec].missing or spec in result.skipped else st.error
            show(ui.markdown_safe(f"{spec}: {message}"), icon=":material/cloud_download:" if plans[spec].missing
                 else ":material/error:")
wall_ms = (time.perf_counter() - started) * 1000

if fills:
    st.caption(f"{len(fills)} model(s) answered in {wall_ms:.0f} ms for this request "
               "(repeated prompts come from the cache).")
    columns = st.columns(len(fills))
    for col, f in zip(columns, fills, strict=True):
        with col:
            st.subheader(escape_markdown(f.name), divider="gray")
            if f.untrained:
                st.warning(UNTRAINED_NOTE, icon=":material/casino:")
            st.caption(f"{f.device} · {f.latency_ms:.0f} ms · {f.n_tokens} tokens")
            st.text(f.filled)  # top-1 answer in place; st.text shows user text verbatim (no markdown)
            for note in f.notices:
                st.info(note.text, icon=ICONS.get(note.kind, ":material/info:"))
            for m in f.masks:
                st.markdown(f"**Mask {m.index + 1}**")
                st.dataframe(pd.DataFrame([{"word": p.word, "token": p.token, "probability": p.score}
                                           for p in m.predictions]), hide_index=True, width="stretch",
                             column_config={"probability": st.column_config.ProgressColumn(
                                 format="%.3f", min_value=0.0, max_value=1.0)})
    n_masks = max(len(f.masks) for f in fills)
    mask = st.radio("Chart for mask", range(n_masks), format_func=lambda i: f"mask {i + 1}", horizontal=True,
                    key="fm_mask") if n_masks > 1 else 0
    ui.figure(plots.topk_figure(fills, mask or 0), "fill_mask_topk", key="fm_fig")
    rows = [{"model": f.name, "untrained": f.untrained, "mask": m.index + 1, "rank": r + 1, "word": p.word,
             "token": p.token, "token_id": p.token_id, "probability": p.score}
            for f in fills for m in f.masks for r, p in enumerate(m.predictions)]
    ui.csv_download(pd.DataFrame(rows), "fill_mask", key="fm_csv")
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
                        tuple(p.stamp for p in el_plans))
    if res.untrained:
        st.warning(UNTRAINED_NOTE, icon=":material/casino:")
    for note in res.notices:
        st.info(note.text, icon=ICONS.get(note.kind, ":material/info:"))
    st.caption(f"{sum(res.replaced)} of {len(res.tokens)} tokens replaced · accuracy at 0.5: {res.accuracy:.0%} "
               f"· {res.latency_ms:.0f} ms")
    ui.figure(plots.replaced_strip(res), "electra_replaced", key="el_fig")
    table = pd.DataFrame({"original": res.original, "input": res.tokens, "replaced": res.replaced,
                          "P(replaced)": res.probability})
    st.dataframe(table, hide_index=True, width="stretch")
    ui.csv_download(table, "electra_replaced", key="el_csv")
