"""Cached wrappers of the Forward pass page: the models it offers and one walk per model and text.

A walk keeps every step's tensor (a few tens of MB for Gemma 3 270M at 64 tokens), so few are kept; the model is
loaded once by the process-wide cache (eager attention: ``explorer.internals.forward.run``).
"""

from __future__ import annotations

import streamlit as st

from app.caches.anytime import cache_complete
from explorer.architecture import catalog
from explorer.internals.forward import families
from explorer.internals.forward.run import run
from explorer.internals.forward.walk import Walk
from explorer.runtime import bundled, workers
from explorer.runtime.resolve import ModelRef
from explorer.tasks import defaults
from explorer.tasks.similarity import BI_ENCODER

__all__ = ["DEFAULT_MODELS", "offered", "walk"]

DEFAULT_MODELS = (bundled.KEY, BI_ENCODER)  # real weights on every clone: a decoder and an encoder


@st.cache_data(max_entries=8, show_spinner=False, ttl=60)
def offered(directory: str | None) -> dict[str, str]:
    """The two bundled models first, then every catalog variant the step-through covers (untrained where no
    weights are on disk), then the lab's models (a minute: new ones show)."""
    keys = [*DEFAULT_MODELS, *(k for k in catalog.keys() if catalog.get_variant(k).model_type in families.FAMILIES)]
    labels = {k: f"{catalog.get_variant(k).name} ({k})" for k in dict.fromkeys(keys)}
    return {**labels, **defaults.lab_models("any", directory)}


@cache_complete(max_entries=4, show_spinner=False)
@workers.queued  # model work waits its turn; a cached walk does not
def walk(ref: ModelRef, text: str, temperature: float, device: str = "auto", dtype: str = "auto") -> Walk:
    """Every step of ``ref`` on ``text``, with its tensors (keyed by the ref, whose stamp follows its weights)."""
    return run(ref, text, temperature=temperature, top_k=10, device=device, dtype=dtype)
