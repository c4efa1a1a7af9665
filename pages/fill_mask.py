"""Fill-mask side by side: every model answers the same prompt (or prompts, one per line) in its own column."""

from __future__ import annotations

import time

import streamlit as st

from app import ui
from app.caches import models as cache
from app.views import device_picker, served_picker
from app.views import fillmask as view
from explorer.core import limits
from explorer.runtime.placement import PlacementKwargs
from explorer.runtime.resolve import ModelRef
from explorer.serving import backend
from explorer.serving.backend import Backend
from explorer.serving.endpoints import Endpoint
from explorer.tasks import fillmask
from explorer.tasks.discriminator import pair_named
from explorer.tasks.fillmask import PRESETS
from explorer.tasks.fillmask import batch as fillbatch


def _use_preset() -> None:
    st.session_state["fm_text"] = st.session_state["fm_preset"]


def prompt_box(device: str) -> str:
    """The preset picker and the prompt (several: one per line)."""
    presets = [p for group in PRESETS.values() for p in group]
    st.selectbox("Probing prompts (what does pretraining teach?)", presets, index=None, key="fm_preset",
                 on_change=_use_preset, placeholder="Pick a preset: trivia, syntax, coreference, bias…",
                 format_func=lambda p: f"{next(g for g, ps in PRESETS.items() if p in ps)}: {p}")
    st.session_state.setdefault("fm_text", presets[0])
    return st.text_area("Prompt (several: one per line)", key="fm_text", height=90,
                        max_chars=limits.FILL_MASK_PROMPT_CHARS,
                        help=f"Up to {cache.prompt_limit(device)} prompts, one per line; blank lines are skipped.")


def model_inputs(device: str, served: bool) -> tuple[tuple[ModelRef, ...], int, int]:
    """Models (in the URL) and typed directories, each resolved once; top-k; the decoder's answer length."""
    keys = cache.fill_keys(cache.models_dir())  # the bundled decoder (a causal column), masked LMs, lab models
    labels = cache.lab_models("fill", cache.models_dir())  # "lab/NAME: trained here (N steps on M words)"
    c1, c2, c3 = st.columns([3, 2, 1])
    most, most_why = cache.page_model_limit(device)  # 8 on a CPU; more where a GPU's memory allows
    default = ui.query_list("models", cache.default_fill_models(cache.models_dir()), keys, limit=most)
    picked = c1.multiselect("Models", keys, default=default, key="fm_models", max_selections=most,
                            format_func=lambda k: labels.get(k, k),
                            help=f"At most {most} models a request ({most_why}). Models you trained with "
                                 "`python -m explorer pretrain` are listed as lab/NAME.")
    paths = c2.text_input("Local model directories (comma-separated)", key="fm_paths",
                          help="Any directory saved with save_pretrained (model + tokenizer).")
    top_k = c3.slider("Top-k", 1, 20, 5, key="fm_topk")
    allow_random = st.toggle("Untrained weights for models whose weights are not on disk", value=True,
                             key="fm_random", help="Random weights built from the published config: the "
                             "predictions are noise, but the code path is real. Labelled 'untrained'.")
    specs = list(dict.fromkeys([*picked, *(p.strip() for p in paths.split(",") if p.strip())]))
    refs = cache.resolve(specs, cache.models_dir(), allow_random)
    answer_tokens = st.slider("Decoder answer length (tokens)", 1, 4, 1, key="fm_decoder_tokens",
                              help="The decoder may answer with several tokens (a number, a name), found by a "
                                   "short beam over continuations of the text before the blank.") if served or any(
        r.decoder for r in refs) else 1
    ui.set_query_list("models", picked)
    return refs, int(top_k), int(answer_tokens)


def answers(prompt: str, refs: tuple[ModelRef, ...], top_k: int, answer_tokens: int, where: PlacementKwargs,
            served: list[Endpoint]) -> None:
    """One prompt: a column per model, here or served, each answering as soon as its model is done (one request
    each); several: a row per prompt (models here). A bad prompt is one message, not one per model."""
    started, directory = time.perf_counter(), cache.models_dir()
    several, valid = fillbatch.is_batch(prompt), False
    with ui.guard():
        valid = several or bool(fillmask.clean_text(prompt))
    if not valid:
        return
    if not refs and not (served and not several):
        st.info("Pick at least one model, or type a directory.", icon=":material/info:")
        return
    if served and several:
        st.info("Served decoders answer one prompt at a time (each candidate is one request scoring the whole "
                "text): type a single prompt to see them.", icon=":material/cloud:")
    if several:
        with ui.guard(), st.spinner(f"Running {len(refs)} model(s)…"):
            many = cache.fill_many(refs, prompt, top_k, directory, answer_tokens, cache.prompt_limit(where["device"]),
                                   **where)
            view.batch(many, {r.spec: r for r in refs}, (time.perf_counter() - started) * 1000)
        return
    models: list[Backend] = [*(backend.model(r, **where) for r in refs), *map(backend.served, served)]
    view.columns(models, lambda m: cache.fill(m, prompt, top_k, answer_tokens), started)


def electra_moved() -> None:
    """ELECTRA's generator/discriminator pair has its own page: a link naming a pair or a discriminator says so."""
    pair = pair_named(str(st.query_params.get("models", "")).split(","), cache.electra_pairs())
    if pair:
        st.info(f"`{pair}` detects replaced tokens rather than filling masks: it has its own page.",
                icon=":material/arrow_forward:")
        ui.page_link("electra.py", f"Replaced-token detection with {pair}", icon=":material/find_replace:", pair=pair)


where = device_picker.pick().kwargs()  # the sidebar's device and precision, part of every cache key
st.title("Fill-mask, side by side")
st.caption("Type a prompt with [MASK] (or <mask>, or ___) where a word is missing: every model gets it with "
           "its own mask token and answers in its column. Several prompts, one per line, give one row per "
           "prompt. Models without weights on disk can run with untrained (random) weights, clearly "
           "labelled, so their code path is still visible.")
electra_moved()
prompt = prompt_box(where["device"])
served = served_picker.pick("fm", "prompt_logprobs", "the causal fill-mask column (whole-text scoring)")
answers(prompt, *model_inputs(where["device"], bool(served)), where, served)
st.caption("The bundled all-MiniLM-L6-v2 (`sentence-bert`) was trained for sentence embeddings and ships "
           "without its masked-LM head, so it cannot fill masks; type `sentence-bert` above to see the check.")
ui.page_link("electra.py", "ELECTRA's generator and discriminator at work: Replaced-token detection",
             icon=":material/find_replace:")
ui.page_link("why.py", "Explain this prediction", text=prompt, target="", models=st.query_params.get("models", ""))
