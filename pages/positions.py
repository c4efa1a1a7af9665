"""Positions and the KV cache: how each variant knows where a token is, and what remembering costs.

Widgets -> app.caches.positions -> explorer.tasks.positions / explorer.architecture.kvcache /
explorer.tasks.generation.cachelive -> app.views.positions.
"""

from __future__ import annotations

import streamlit as st

from app import ui
from app.caches import positions as cache
from app.caches.models import models_dir, resolve
from app.views import device_picker
from app.views import positions as view
from explorer.architecture import kvcache
from explorer.core import limits
from explorer.runtime import bundled
from explorer.runtime.placement import PlacementKwargs
from explorer.tasks.generation import cachelive

EXAMPLE = "The cat sat on the mat because it was warm."
LIVE_EXAMPLE = "The key and value cache of a transformer"
DTYPES = tuple(kvcache.DTYPE_BYTES)


def _query(name: str, default: str) -> str:
    value = st.query_params.get(name)
    return value if isinstance(value, str) else default


def _side_by_side(names: list[str], text: str, distance: int, where: PlacementKwargs) -> None:
    refs = resolve(names, directory, allow_random=False)
    for i, (col, name, ref) in enumerate(zip(st.columns(len(names)), names, refs, strict=True)):
        with col, ui.guard():
            st.subheader(offered.get(name, name))
            v = cache.positions(ref, text, **where)
            view.column(v, name, cache.series(name, distance), str(i))


def _calculator() -> None:
    keys = st.multiselect("Variants on the chart", list(offered), format_func=lambda k: offered.get(k, k),
                          default=ui.query_list("cache", list(cache.CACHE_MODELS), list(offered)), key="pos_cache")
    ui.set_query_list("cache", keys)
    c1, c2, c3 = st.columns(3)
    ui.seed_from_url("pos_dtype", "dtype", DTYPES)
    dtype = c1.selectbox("Cache dtype", DTYPES, index=DTYPES.index("bfloat16"), key="pos_dtype")
    shown = c2.selectbox("Layers of", keys or [bundled.KEY], key="pos_plan_model")
    context = int(c3.number_input("Context (tokens)", 1, kvcache.MAX_CONTEXT,
                                  ui.query_int("context", 4096, 1, kvcache.MAX_CONTEXT), key="pos_context"))
    st.query_params["dtype"], st.query_params["context"] = dtype, str(context)
    if not keys:
        st.caption("Pick variants to chart.")
        return
    with ui.guard():
        view.calculator(cache.curves(tuple(keys), dtype), cache.weight_bytes(tuple(keys), dtype),
                        cache.plan(shown, context, dtype))


def _live(where: PlacementKwargs) -> None:
    st.session_state.setdefault("pos_live_text", _query("prompt", LIVE_EXAMPLE))
    c1, c2 = st.columns([4, 1])
    prompt = c1.text_input("Prompt", key="pos_live_text", max_chars=limits.GENERATION_PROMPT_CHARS)
    new = int(c2.number_input("New tokens", 1, cachelive.MAX_NEW_TOKENS,
                              ui.query_int("new", 32, 1, cachelive.MAX_NEW_TOKENS), key="pos_live_new"))
    st.query_params["prompt"], st.query_params["new"] = prompt, str(new)
    if st.button("Generate with and without the cache", key="pos_live_go", type="primary"):
        st.session_state["pos_live_asked"] = (prompt, new)
    if st.session_state.get("pos_live_asked") != (prompt, new):
        st.caption("Greedy, the same prompt twice: once feeding only the newest token to the cache, once reading "
                   "the whole text again at every step.")
        return
    with ui.guard(), st.spinner("Generating twice…"):
        ref = resolve([bundled.KEY], directory, allow_random=False)[0]
        view.live(cache.live(ref, prompt, new, **where))


where = device_picker.pick().kwargs()
st.title("Positions and the KV cache")
st.caption("How each variant knows where a token is (a learned table, fixed sinusoids, T5's relative buckets, "
           "DeBERTa's disentangled positions, rotary angles), read from its config and checked against its own "
           "modules where the weights are here; then what generation costs in memory: the key/value cache.")
directory = models_dir()
offered = cache.offered()
st.header("Positions, side by side")
c1, c2 = st.columns([3, 1])
models = c1.multiselect("Variants (one or two)", list(offered), format_func=lambda k: offered.get(k, k),
                        default=ui.query_list("models", list(cache.DEFAULT_MODELS), list(offered), limit=2),
                        max_selections=2, key="pos_models",
                        help="A variant without weights here is drawn from its formula (a learned table: random).")
distance = int(c2.number_input("Distances up to", 1, 4096, ui.query_int("dist", 128, 1, 4096), key="pos_dist"))
st.session_state.setdefault("pos_text", _query("text", EXAMPLE))
text = st.text_input(f"Text (its first {limits.FORWARD_TOKENS} tokens)", key="pos_text",
                     max_chars=limits.FORWARD_TEXT_CHARS)
ui.set_query_list("models", models)
st.query_params["text"], st.query_params["dist"] = text, str(distance)
ui.page_link("forward.py", "The position step of each model, one click away: Forward pass",
             ":material/conveyor_belt:", models=",".join(models), text=text)
if models:
    _side_by_side(models, text, distance, where)
view.reference()
st.header("The key/value cache")
st.caption("Bytes per layer: 2 (keys, values) x key/value heads x head width x dtype for every cached position; "
           "a windowed layer keeps only its last window - 1. Log axes.")
_calculator()
st.header("Live: generation with and without the cache (bundled Gemma 3 270M)")
_live(where)
