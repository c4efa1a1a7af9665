"""Evaluate: several models on the same examples (accuracy, perplexity) and an embedding projector."""

from __future__ import annotations

import streamlit as st

from app.caches.models import models_dir
from app.views import device_picker
from app.views import evaluation as view

where = device_picker.pick()  # the sidebar's device and precision, part of every cache key
directory = models_dir()  # typed on the Models page, else EXPLORER_MODELS_DIR
st.title("Evaluate")
st.caption("Several models on the same examples: which gets which item right, where they disagree, and what their "
           "embeddings look like. Tasks are JSONL in lm-evaluation-harness's shapes; scores equal lm-eval's on the "
           "same weights (tested). Local models and served ones (an engine's echoed log-probabilities) side by side.")

accuracy, perplexity, projector = st.tabs(["Task accuracy", "Perplexity", "Embedding projector"], key="eval_view",
                                          bind="query-params")  # only the open tab runs; the tab is in the link
if accuracy.open:
    with accuracy:
        view.task_part(where, directory)
if perplexity.open:
    with perplexity:
        view.perplexity_part(where, directory)
if projector.open:
    with projector:
        view.projector_part(where, directory)
