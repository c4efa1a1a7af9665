"""Attention maps: real attention weights of a model on your text, 512 tokens or more.

Widgets -> app.caches.attention (cached extraction and views) -> explorer.plots.attention.
"""

from __future__ import annotations

import functools

import streamlit as st

from app import ui
from app.caches import attention as cache
from app.views import attention as attention_view
from app.views import device_picker
from explorer.core import userinput
from explorer.plots import attention as plots
from explorer.runtime.resolve import ModelRef, resolve
from explorer.tasks import attention
from explorer.tasks.attention import compact, views

DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."
ZOOM_FROM = 64  # longer texts get a token-range slider

st.title("Attention maps")
st.caption("Who attends to whom, per layer and head, from a real forward pass (eager attention). "
           "Rows are queries (the token attending), columns are keys (the token attended to). "
           "Longformer's windowed and BigBird's block-sparse outputs are mapped back onto the full matrix.")
ui.page_link("interventions.py", "Which heads cause a prediction? Ablate them: Interventions", ":material/science:")


def _pick_model() -> ModelRef:
    """The model (key or directory, untrained or not), resolved once: every cache of the page is keyed on it."""
    c1, c2 = st.columns([3, 1])
    random_weights = c2.toggle("Random weights", key="att_random",
                               help="Untrained model built from the variant's config: shows the mechanics only.")
    options = cache.model_options(random_weights)
    labels = dict(options)
    keys = [k for k, _ in options] + ([] if random_weights else ["__path__"])
    ui.seed_from_url("att_model", "model", keys)
    key = c1.selectbox("Model", keys, key="att_model",
                       format_func=lambda k: "Local directory..." if k == "__path__" else labels.get(k, k),
                       help="The bundled all-MiniLM-L6-v2 works offline; other models appear here once "
                            "their weights are downloaded (Models & weights page).")
    if key != "__path__":
        st.query_params["model"] = key  # the view can be shared as a link (not local paths)
    else:
        key = c1.text_input("Model directory (saved with save_pretrained)", key="att_path").strip()
        if not key:
            st.info("Type the path of a directory holding config.json, weights and tokenizer files.")
            st.stop()
    return resolve(key, random_weights=random_weights)


def _request() -> cache.Req:
    ref = _pick_model()
    where = device_picker.pick().kwargs()  # the sidebar's device and precision: part of the key, and the cap
    ceiling, why = cache.token_ceiling(where["device"])
    text = st.text_area("Text", DEFAULT_TEXT, key="att_text", height=100,
                        help=f"Long texts are cut to the model's limit and the device's cap ({why}). Gemma 3's "
                             "local layers look 512 tokens back: paste a longer text to see their band.")
    c1, c2 = st.columns([3, 1])
    target = c1.text_input("Decoder text (encoder-decoders only)", key="att_target",
                           help="T5/BART decoders read this text (teacher-forced); empty: the text itself.")
    max_tokens = c2.number_input("Max tokens", 2, ceiling, ceiling, key=f"att_max_{ceiling}")
    # Longformer's global tokens: the field appears once the model is known (see _global_tokens)
    extra: tuple[int, ...] = ()
    with ui.guard():  # a typo: say so, and go on with [CLS] alone so the field stays editable
        extra = userinput.parse_positions(st.session_state.get("att_global", ""), int(max_tokens))
    return cache.Req(ref, text, target or None, int(max_tokens), tuple(sorted({0, *extra})), **where)


def _global_tokens(info: dict) -> None:
    if info["source_format"] == "longformer-window":
        st.text_input("Extra global tokens (positions, e.g. 5, 17)", key="att_global",
                      help="Longformer: these tokens attend to and are attended by every token; "
                           f"[CLS] (0) always is. Now global: {info['global_positions']}.")


def _index(col, label: str, count: int, key: str, disabled: bool = False) -> int:
    """A 0-based slider (0 for one): its key carries ``count``: a smaller model never meets a value past its range."""
    if count <= 1:
        return 0
    return int(col.slider(label, 0, count - 1, 0, key=f"{key}_{count}", disabled=disabled))


def _controls(info: dict) -> tuple[str, int, int, tuple[int, int]]:
    # block maps (long texts on a GPU) answer per head only: the other views need every cell
    offered = list(views.menu_views("cross_shape" in info)) if info["block"] == 1 else ["head"]
    ui.seed_from_url("att_view", "view", offered)
    view = st.radio("View", offered, format_func=views.VIEW_LABELS.get, horizontal=True, key="att_view")
    st.query_params["view"] = view
    st.caption(views.VIEW_HELP[view])
    shape = info["decoder_shape"] if view in ("decoder", "cross") else info["shape"]
    c1, c2, c3 = st.columns(3)
    layer = _index(c1, "Layer", shape[0], "att_layer", disabled=view == "grid")
    head = _index(c2, "Head", shape[1], "att_head", disabled=view not in views.HEAD_VIEWS)
    n, rng = info["n_tokens"], (0, info["n_tokens"])
    if n > ZOOM_FROM and view != "decoder" and not _long(info, view):
        rng = c3.slider("Token range (zoom)", 0, n, (0, n), key=f"att_range_{n}",
                        help="Show only these text tokens: rows and columns of the matrix.")
    return view, layer, head if view in views.HEAD_VIEWS else 0, (int(rng[0]), max(int(rng[1]), int(rng[0]) + 1))


def _long(info: dict, view: str) -> bool:
    return view == "head" and info["n_tokens"] > attention.DISPLAY_TOKENS


def _show_view(req: cache.Req, info: dict, view: str, layer: int, head: int, rng: tuple[int, int]) -> None:
    v = cache.view(req, view, layer, head, rng)
    name = f"attention-{view}-L{layer}" + (f"-H{head}" if view in views.HEAD_VIEWS else "")
    short = max(v.matrix.shape) <= plots.LINK_MAX_TOKENS  # lines only when few tokens: else heatmap only
    heat_tab, link_tab = st.tabs(["Heatmap", "Links"]) if short else (st.container(), None)
    with heat_tab:
        ui.figure(plots.head_heatmap(v, untrained=info["untrained"]), name, key="att_heatmap")
    if link_tab is not None:
        with link_tab:
            k = st.slider("Links per token", 1, 5, 2, key="att_topk")
            ui.figure(plots.link_view(v, top_k=k, untrained=info["untrained"]), f"{name}-links", key="att_links")
    c1, c2 = st.columns(2)
    with c1:
        ui.download("Download matrix (.npy)", compact.npy_bytes(v.matrix), f"{name}.npy", key="att_npy")
    with c2:
        ui.csv_download(v.to_frame(), name, "Download matrix (CSV)", key="att_csv")


def _show_grid(req: cache.Req, info: dict, rng: tuple[int, int]) -> None:
    with st.spinner("Building the model view..."):
        fig, size = cache.grid_figure(req, rng)
    ui.figure(fig, "attention-model-view", key="att_grid")
    per_cell = plots.tokens_per_cell(rng[1] - rng[0])
    st.caption(f"Each small map averages blocks of up to {per_cell} x {per_cell} tokens; sent to the browser: "
               f"{size / 1e6:.2f} MB. Pick a layer and head in the Head view for the exact matrix.")
    ui.download("Download all layers x heads (.npy)", functools.partial(cache.tensor_npy, req), "attention-all.npy",
                key="att_npy_all")


with ui.guard():
    req = _request()
    with st.spinner("Running the model (first use loads it)..."):
        info, notices = cache.summary(req)
    attention_view.notices(info, notices)
    _global_tokens(info)
    view, layer, head, rng = _controls(info)
    if view == "grid":
        _show_grid(req, info, rng)
    elif _long(info, view):
        attention_view.show_long(req, info, layer, head)
    else:
        _show_view(req, info, view, layer, head, rng)
