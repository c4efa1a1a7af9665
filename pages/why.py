"""Why this prediction: every layer's guess (the lens) and every token's share (attribution), models side by side."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app import ui
from app.caches import explain as cache
from app.caches.models import models_dir, resolve
from app.views import device_picker, served_picker
from app.views import explain as view
from explorer.core import limits
from explorer.explain.attribution import AUTO, DEFAULT_STEPS, MAX_STEPS, METHOD_NAMES, Steps
from explorer.explain.lens import Lens
from explorer.explain.target import check_question
from explorer.serving import backend
from explorer.serving.backend import Backend

EXAMPLE, TARGET, PAIR = "The capital of France is", "Paris", "Paris is the capital of France."
METHODS = list(METHOD_NAMES)
DEFAULT_METHODS = ["grad-input", "ig", "occlusion"]
STEP_CHOICES = [AUTO, *(str(n) for n in (8, 16, 32, 64, 128, 256, MAX_STEPS))]


def _query(name: str, default: str) -> str:
    value = st.query_params.get(name)
    return value if isinstance(value, str) else default


def inputs() -> tuple[str, str, str, str]:
    """The text, the target, the foil and a sentence encoder's second sentence (each seeded from the URL)."""
    for key, name, default in (("why_text", "text", EXAMPLE), ("why_target", "target", TARGET),
                               ("why_foil", "foil", ""), ("why_pair", "pair", PAIR)):
        st.session_state.setdefault(key, _query(name, default))
    text = st.text_area("Text (a blank ___ or [MASK] for a masked LM, T5, BART or a decoder's fill-in)",
                        key="why_text", height=80, max_chars=limits.EXPLAIN_TEXT_CHARS)
    c1, c2, c3 = st.columns(3)
    target = c1.text_input("Target (empty: each model's own prediction)", key="why_target",
                           max_chars=limits.EXPLAIN_TARGET_CHARS)
    foil = c2.text_input("Foil (optional: target minus foil)", key="why_foil", max_chars=limits.EXPLAIN_TARGET_CHARS)
    pair = c3.text_input("Second sentence (sentence encoders)", key="why_pair", max_chars=limits.EXPLAIN_TEXT_CHARS)
    for name, value in (("text", text), ("target", target), ("foil", foil), ("pair", pair)):
        st.query_params[name] = value
    return text, target, foil, pair


def choices(directory: str | None) -> tuple[list[str], list[str], Steps, int | None]:
    """Models, methods, integrated gradients' steps and the lens's position, all in the URL."""
    keys = cache.offered(directory)
    c1, c2, c3 = st.columns([3, 3, 1])
    models = c1.multiselect("Models (side by side)", keys, key="why_models", max_selections=4,
                            default=ui.query_list("models", list(cache.DEFAULT_MODELS), keys, limit=4),
                            help="Models without weights on disk run with untrained weights, labelled so.")
    methods = c2.multiselect("Attribution methods", METHODS, format_func=lambda m: METHOD_NAMES[m], key="why_methods",
                             default=ui.query_list("methods", DEFAULT_METHODS, METHODS))
    asked = ui.query_choice("steps", STEP_CHOICES, str(DEFAULT_STEPS))
    chosen = c3.selectbox("IG steps", STEP_CHOICES, key="why_steps", index=STEP_CHOICES.index(asked),
                          help="Integrated gradients' steps, run in batches; auto raises them until the scores sum to "
                               "the difference within 1%.")
    steps: Steps = chosen if chosen == AUTO else int(chosen)
    position = int(c3.number_input("Lens position", -1, 255, ui.query_int("position", -1, -1, 255), key="why_position",
                                   help="The token the lens reads after (-1: where the target goes)."))
    st.session_state.setdefault("why_dir", _query("dir", ""))
    folder = st.text_input("Or a directory saved with save_pretrained", key="why_dir").strip()
    ui.set_query_list("models", models)
    ui.set_query_list("methods", methods)
    st.query_params["steps"], st.query_params["dir"], st.query_params["position"] = str(steps), folder, str(position)
    return models + ([folder] if folder else []), methods, steps, None if position < 0 else position


where = device_picker.pick().kwargs()
st.title("Why this prediction")
st.caption("Where in the network the answer forms (the lens: every layer read through the model's own final norm "
           "and head), and which input tokens it rests on (attribution: gradients, integrated gradients, "
           "occlusion). Models side by side in columns, methods in rows.")
directory = models_dir()
text, target, foil, pair = inputs()
models, methods, steps, position = choices(directory)
served = served_picker.pick("why", "prompt_logprobs", "occlusion (scoring the text with each token left out)")
refs = resolve(models, directory, allow_random=True)
if not refs and not served:
    st.info("Pick at least one model.", icon=":material/info:")
    st.stop()
typed = None
with ui.guard():  # an empty or over-long text, a foil equal to the target: one message, not one per model
    typed = check_question(text, target, foil)
if typed is None:
    st.stop()
models_here: list[Backend] = [*(backend.model(r, **where) for r in refs), *map(backend.served, served)]
cells = [(m, f"m{i}") for i, m in enumerate(models_here)]


def row(title: str, cell: Callable[[Backend, str], object]) -> None:
    """One row: a cell per model (here, then served), each asked the same way."""
    st.subheader(title)
    for col, (model, key) in zip(st.columns(max(1, len(cells))), cells, strict=True):
        with col:
            view.header(model)
            cell(model, key)


lenses: list[Lens | None] = []
row("Every layer's guess (logit lens)",
    lambda model, key: lenses.append(view.lens_cell(model, text, target, position, False, key)))
view.depth([x for x in lenses if x is not None])
row("Tuned lens (a translator per layer, trained to match the last layer)",
    lambda model, key: view.tuned_cell(model, text, target, position, key))
for method in methods:
    def attributed(model: Backend, key: str, m: str = method) -> None:
        view.attribution_cell(model, m, text, target, foil, pair, steps, key)

    row(METHOD_NAMES[method].capitalize(), attributed)
