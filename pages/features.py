"""Features: a sparse dictionary's features on a model: one feature's dashboard, a text's active features, and a
feature clamped or ablated with the prediction before and after.

Widgets -> app.caches.features -> explorer.features (requests) -> explorer.plots.features -> app.views.features.
Dictionaries are trained by ``python -m explorer sae train`` (saved beside the model, listed here); the bundled
Gemma has a small one shipped in assets/features/.
"""

from __future__ import annotations

import streamlit as st

from app import ui
from app.caches import features as cache
from app.caches.models import models_dir, resolve
from app.views import device_picker
from app.views import features as view
from explorer.features import requests
from explorer.runtime import bundled

EXAMPLE = "The function returns a list of the values in the dictionary."

where = device_picker.pick().kwargs()
st.title("Features")
st.caption("A sparse autoencoder rewrites a site of the model (here the residual stream after a block) as a few "
           "active features out of thousands, each with a direction it adds back. Pick one to see the held-out "
           "contexts where it fires, how often, and which tokens its direction promotes; type a text to see which "
           "fire where; clamp one and watch the prediction move.")
directory = models_dir()
st.session_state.setdefault("ft_model", st.query_params.get("model", bundled.KEY))
model = st.text_input("Model (catalog key or a folder saved with save_pretrained)", key="ft_model").strip()
st.query_params["model"] = model
refs = None
with ui.guard():
    refs = resolve([model or bundled.KEY], directory, allow_random=False)
if not refs:
    st.stop()
ref = refs[0]
saved_list = []
with ui.guard():
    saved_list = cache.listed(ref)
labels = dict(saved_list)
st.session_state.setdefault("ft_folder", st.query_params.get("sae", ""))
typed = st.text_input("Or a dictionary folder (ours, SAELens's cfg.json + sae_weights.safetensors, or Gemma "
                      "Scope's params.safetensors)", key="ft_folder").strip()
st.query_params["sae"] = typed
if not labels and not typed:
    st.info(f"No dictionary is saved for {model}. Train one: `python -m explorer sae train --model {model} "
            "--out DIR`, then type DIR above.", icon=":material/info:")
    st.stop()
choices = list(labels) + ([typed] if typed and typed not in labels else [])
place = st.selectbox("Dictionary", choices, index=len(choices) - 1 if typed else 0,
                     format_func=lambda p: labels.get(p, p), key="ft_sae")
saved = None
with ui.guard():
    saved = requests.open_saved(place) if cache.fits(ref, place, **where) else None
if saved is None:
    st.stop()
view.figures(saved)
width = saved.dictionary.width
feature = int(st.number_input(f"Feature (0 to {width - 1:,})", 0, width - 1,
                              ui.query_int("feature", 0, 0, width - 1), key="ft_feature"))
st.query_params["feature"] = str(feature)

dash, probe, use = st.tabs(["Dashboard", "Active features of a text", "Clamp or ablate"])
with dash, ui.guard(), st.spinner("Reading the held-out text through the dictionary…"):
    view.card(cache.card(ref, place, feature, **where))
with probe:
    text = st.text_area("Text", EXAMPLE, key="ft_text", height=80)
    with ui.guard():
        view.active(cache.active(ref, place, text, **where))
with use:
    c1, c2 = st.columns([1, 3])
    value = float(c1.number_input("Clamp to (0 ablates)", -1e4, 1e4, 10.0, key="ft_value"))
    prompt = c2.text_input("Prompt", "The function returns", key="ft_prompt")
    with ui.guard():
        view.clamped(cache.clamp(ref, place, feature, value, prompt, **where))
