"""Forward pass: how a variant computes, step by step, on its own weights, two variants side by side.

Widgets -> app.caches.forward (one walk per model and text) -> explorer.internals.forward -> app.views.forward.
"""

from __future__ import annotations

import streamlit as st

from app import ui
from app.caches import forward as cache
from app.caches.models import models_dir, resolve
from app.views import device_picker
from app.views import forward as view
from explorer.core import limits
from explorer.internals.forward import align, inputs
from explorer.internals.forward.walk import Walk

EXAMPLE = "The capital of France is"


def _query(name: str, default: str) -> str:
    value = st.query_params.get(name)
    return value if isinstance(value, str) else default


def _walks(refs, text: str, temperature: float, where) -> list[Walk]:
    walks: list[Walk] = []
    for ref in refs:
        with ui.guard():
            walks.append(cache.walk(ref, text, temperature, **where))
    return walks


def _cursor(lead: Walk) -> int:
    """The lead model's current step: a layer to jump to, a step list, and previous / next, all in the URL."""
    n, places = len(lead.steps), view.groups(lead)
    st.session_state.setdefault("fw_step", ui.query_int("step", 0, 0, n - 1))
    st.session_state["fw_step"] = min(int(st.session_state["fw_step"]), n - 1)

    def jump() -> None:
        st.session_state["fw_step"] = places[st.session_state["fw_place"]]

    def move(by: int) -> None:
        st.session_state["fw_step"] = min(max(0, int(st.session_state["fw_step"]) + by), n - 1)

    here = view.group_label(lead.steps[st.session_state["fw_step"]], lead.steps, st.session_state["fw_step"])
    st.session_state["fw_place"] = here
    c1, c2, c3, c4 = st.columns([2, 5, 1, 1])
    c1.selectbox("Go to", list(places), key="fw_place", on_change=jump)
    c2.selectbox("Step", range(n), key="fw_step", format_func=lambda i: view.step_label(lead, i))
    c3.button("◀ Previous", on_click=move, args=(-1,), disabled=st.session_state["fw_step"] == 0, width="stretch")
    c4.button("Next ▶", on_click=move, args=(1,), disabled=st.session_state["fw_step"] >= n - 1, width="stretch")
    st.query_params["step"] = str(st.session_state["fw_step"])
    return int(st.session_state["fw_step"])


where = device_picker.pick().kwargs()
st.title("Forward pass")
st.caption("What happens to a text between the embedding lookup and the logits, one operation at a time: every "
           "step recomputed from the model's own weights with plain tensor operations, and checked against the "
           "value the model itself computes at that point. Two variants side by side, their steps lined up by kind.")
directory = models_dir()
offered = cache.offered(directory)
c1, c2 = st.columns([3, 2])
models = c1.multiselect("Models (one or two, side by side)", list(offered), format_func=lambda k: offered.get(k, k),
                        default=ui.query_list("models", list(cache.DEFAULT_MODELS), list(offered), limit=2),
                        max_selections=2, key="fw_models",
                        help="A variant without weights on disk runs with untrained weights, labelled so.")
st.session_state.setdefault("fw_dir", _query("dir", ""))
folder = c2.text_input("Or a directory saved with save_pretrained", key="fw_dir").strip()
st.session_state.setdefault("fw_text", _query("text", EXAMPLE))
text = st.text_input(f"Text (up to {limits.FORWARD_TOKENS} tokens; a masked LM reads a ___ blank)", key="fw_text",
                     max_chars=limits.FORWARD_TEXT_CHARS)
ui.set_query_list("models", models)
st.query_params["text"], st.query_params["dir"] = text, folder
names = models[:2] if not folder else [*models[:1], folder]
if not names:
    st.info("Pick a model.", icon=":material/info:")
    st.stop()
checked = None
with ui.guard():  # an empty or over-long text: one message, not one per model
    checked = inputs.check_text(text)
if checked is None:
    st.stop()
walks = _walks(resolve(names, directory, allow_random=True), text, 1.0, where)
if not walks:
    st.stop()
lead = walks[0]
index = _cursor(lead)
heads = max(s.heads for w in walks for s in w.card.stacks)
c1, c2 = st.columns(2)
head = int(c1.number_input("Head (steps with a head axis)", 0, heads - 1, ui.query_int("head", 0, 0, heads - 1),
                           key="fw_head"))
tokens = max(len(w.tokens) for w in walks)
token = int(c2.number_input("Token (its vector)", 0, tokens - 1, ui.query_int("token", 0, 0, tokens - 1),
                            key="fw_token"))
st.query_params["head"], st.query_params["token"] = str(head), str(token)
for col, w in zip(st.columns(len(walks)), walks, strict=True):
    with col:
        view.column(w, index if w is lead else align.counterpart(lead, index, w), head, token, w.model)
view.how_they_differ(walks)
view.stream(walks, token)
view.predictions(walks)
