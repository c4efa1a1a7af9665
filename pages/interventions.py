"""Interventions: patch, ablate and steer a live model's layers, heads and neurons through nnsight.

Widgets -> app.caches.interventions (cached results) -> explorer.interventions -> app.views.interventions.
"""

from __future__ import annotations

import streamlit as st

from app import ui
from app.caches import interventions as cache
from app.caches import models as models_cache
from app.views import device_picker
from app.views import interventions as view
from explorer.core import limits
from explorer.interventions import ablation, across, components, metrics, models, patching, steering

CLEAN, CORRUPT = "The Eiffel Tower is in the city of ___.", "The Colosseum is in the city of ___."
PROMPT_CHARS, ANSWER_CHARS = limits.INTERVENTION_PROMPT_CHARS, limits.INTERVENTION_ANSWER_CHARS

st.title("Interventions")
st.caption("Attention maps and attributions show what a prediction goes with; interventions show what causes it. "
           "Restore one activation of a clean prompt inside a corrupted one (activation patching), switch a head or "
           "a neuron off (ablation), or add a direction to the residual stream (steering). Everything runs through "
           "nnsight on a view of the model: the model other pages share is never changed.")


def _target() -> cache.Target:
    c1, c2 = st.columns([3, 1])
    random = c2.toggle("Random weights", key="iv_random", help="Untrained models built from each variant's "
                       "config: the mechanics only, labelled untrained.")
    directory = models_cache.models_dir()
    options = cache.options(random, directory)
    labels = dict(options)
    ui.seed_from_url("iv_model", "model", list(labels))
    key = c1.selectbox("Model", list(labels), key="iv_model", format_func=lambda k: labels.get(k, k),
                       help="Gemma 3 270M ships with the app; masked LMs, T5/BART and the Lab's models appear once "
                            "their weights are on disk (Models & weights page).")
    st.query_params["model"] = key
    # resolved once here (a served name refused in words); every cache and intervention below takes the ref
    return cache.Target(models.local_ref(key, directory, random_weights=random), **device_picker.pick().kwargs())


def _pair() -> cache.PairReq:
    c1, c2 = st.columns(2)
    with c1:
        clean = view.url_text("Clean prompt", "iv_clean", "clean", CLEAN, max_chars=PROMPT_CHARS,
                              help="Put ___ where the answer goes; a decoder reads the text before it.")
        target = view.url_text("Target (the clean prompt's answer)", "iv_target", "target", "Paris",
                               max_chars=ANSWER_CHARS)
    with c2:
        corrupt = view.url_text("Corrupted prompt", "iv_corrupt", "corrupt", CORRUPT, max_chars=PROMPT_CHARS)
        foil = view.url_text("Foil (the corrupted prompt's answer)", "iv_foil", "foil", "Rome",
                             max_chars=ANSWER_CHARS)
    view.how_to_corrupt()
    return cache.PairReq(clean, corrupt, target, foil)


def _patching(where: cache.Target, pair: cache.PairReq) -> None:
    c1, c2 = st.columns(2)
    with c1:
        site = view.url_choice("Site", patching.GRID_SITES, "iv_site", "site",
                               format_func=lambda s: {"resid": "residual stream", "attn": "attention output",
                                                      "mlp": "MLP output", "heads": "each head"}[s])
    with c2:
        metric = view.url_choice("Metric", metrics.METRICS, "iv_metric", "metric",
                                 format_func=lambda m: metrics.LABELS[m])
    bar = st.progress(0.0, text="Patching…")
    result = cache.patch(where, pair, site, metric, ui.progress_to(bar))
    bar.empty()
    view.grid(result, "iv_grid")


def _ablation(where: cache.Target, pair: cache.PairReq) -> None:
    text = view.url_text("Text", "iv_ab_text", "ab_text", pair.clean, max_chars=PROMPT_CHARS)
    c1, c2, c3 = st.columns(3)
    with c1:
        kind = view.url_choice("Component", components.KINDS, "iv_ab_kind", "ab_kind", radio=False)
    with c2:
        spec = view.url_text("Which (LAYER.HEAD, LAYER.NEURON, LAYER.attn / LAYER.mlp, LAYER)", "iv_ab_spec",
                             "ab", "12.2" if where.ref.spec == models.BUNDLED else "0.0", max_chars=ANSWER_CHARS)
    with c3:
        mode = view.url_choice("Mode", ablation.MODES, "iv_ab_mode", "ab_mode")
    view.ablation(cache.ablate(where, text, kind, spec, mode, pair.target))
    if st.toggle("Rank every head by its ablation effect, beside the Compression lab's gradient importance",
                 key="iv_rank"):
        with st.spinner("Ablating every head in turn, and measuring each one's gradient importance…"):
            view.ranking(cache.rank(where, text, pair.target, pair.foil, mode))


def _steering(where: cache.Target) -> None:
    text = view.url_text("Prompt", "iv_st_text", "st_text", "I think that you are", max_chars=PROMPT_CHARS)
    c1, c2 = st.columns(2)
    with c1:
        positive = view.url_text("Positive prompts (one per line)", "iv_st_pos", "pos", "I love you", area=True,
                                 height=68, max_chars=PROMPT_CHARS)
    with c2:
        negative = view.url_text("Negative prompts (one per line)", "iv_st_neg", "neg", "I hate you", area=True,
                                 height=68, max_chars=PROMPT_CHARS)
    c1, c2, c3, c4 = st.columns(4)
    layer = view.url_number(c1, "Layer", "iv_st_layer", "layer", 6, 0, 511)
    coefficient = view.url_number(c2, "Coefficient", "iv_st_coef", "coef", 3.0, -50.0, 50.0, 0.25)
    tokens = view.url_number(c3, "New tokens", "iv_st_tokens", "tokens", 12, 1, steering.MAX_NEW_TOKENS)
    seed = view.url_number(c4, "Seed", "iv_st_seed", "seed", 0, 0, 2**31 - 1)
    strategy = view.url_choice("Decoding", steering.STRATEGIES, "iv_st_strategy", "strategy")
    with st.spinner("Generating with and without the steering vector…"):
        view.steering(cache.steer(where, text, tuple(positive.splitlines()), tuple(negative.splitlines()),
                                  layer, coefficient, tokens, strategy, seed))


def _across(where: cache.Target, pair: cache.PairReq) -> None:
    random, directory = where.ref.random_weights, where.ref.models_dir
    options = dict(cache.options(random, directory))
    picked = st.multiselect("Models", list(options), default=ui.query_list("models", [where.ref.spec], list(options),
                            limit=across.MAX_MODELS), max_selections=across.MAX_MODELS, key="iv_across_models",
                            format_func=lambda k: options.get(k, k))
    ui.set_query_list("models", picked)
    if st.button("Patch the residual stream of each", key="iv_across_go") or st.session_state.get("iv_across_done"):
        st.session_state["iv_across_done"] = True
        refs = across.local_refs(picked, directory, random_weights=random)  # each resolved once, loaded below
        with st.spinner("One patching grid per model…"):
            view.across(cache.side_by_side(refs, pair, "resid", "logit-diff", where.device, where.dtype))


def _remote(pair: cache.PairReq) -> None:
    view.remote_note()
    c1, c2 = st.columns(2)
    repo = c1.text_input("Model NDIF hosts (Hugging Face id)", "meta-llama/Llama-3.1-8B", key="iv_ndif_repo")
    key = c2.text_input("NDIF API key (never stored or put in the URL)", type="password", key="iv_ndif_key")
    if st.button("Trace on NDIF", key="iv_ndif_go"):
        with st.spinner("Asking NDIF…"):
            view.grid(cache.on_ndif(repo, pair, key), "iv_ndif")


with ui.guard():
    where = _target()
    pair = _pair()
    tabs = st.tabs(["Patching", "Ablation", "Steering", "Across families", "Remote (NDIF)"])
    for tab, section in zip(tabs, (lambda: _patching(where, pair), lambda: _ablation(where, pair),
                                   lambda: _steering(where), lambda: _across(where, pair), lambda: _remote(pair)),
                            strict=True):
        with tab, ui.guard():
            section()
