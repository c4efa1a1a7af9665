"""Cached wrappers of the Positions page: one variant's positions on a text, its series by distance, the cache
calculator's curves and plan, and the live cached-against-uncached generation on the bundled Gemma.

Models are loaded once by the process-wide cache; the live run is kept per prompt and length (its speeds are
those measured then: running it again measures again only when the prompt or the length changes).
"""

from __future__ import annotations

import streamlit as st

from app.caches.anytime import cache_complete
from explorer.architecture import catalog, census, kvcache
from explorer.architecture.positions.scheme import Scheme, by_distance, scheme_of
from explorer.runtime import bundled, workers
from explorer.runtime.resolve import ModelRef
from explorer.tasks.generation import cachelive
from explorer.tasks.positions import PositionView, view
from explorer.tasks.similarity import BI_ENCODER

__all__ = ["CACHE_MODELS", "DEFAULT_MODELS", "curves", "live", "offered", "plan", "positions", "scheme",
           "series", "weight_bytes"]

DEFAULT_MODELS = (bundled.KEY, BI_ENCODER)  # real weights on every clone: a rotary decoder, a learned table
CACHE_MODELS = (bundled.KEY, "gpt2", "gpt-j", "t5-base", "bert-base")  # MQA + windows, MHA, long heads, seq2seq


@st.cache_data(max_entries=2, show_spinner=False)
def offered() -> dict[str, str]:
    """The two bundled models first, then every catalog variant."""
    keys = dict.fromkeys([*DEFAULT_MODELS, *catalog.keys()])
    return {k: f"{catalog.get_variant(k).name} ({k})" for k in keys}


@cache_complete(max_entries=8, show_spinner=False)
@workers.queued  # model work waits its turn; a cached view does not
def positions(ref: ModelRef, text: str, device: str = "auto", dtype: str = "auto") -> PositionView:
    """``ref``'s positions on ``text`` (keyed by the ref, whose stamp follows its weights)."""
    return view(ref, text, device=device, dtype=dtype)


@st.cache_data(max_entries=64, show_spinner=False)
def scheme(key: str) -> Scheme:
    return scheme_of(catalog.variant_config(key), key)


@st.cache_data(max_entries=64, show_spinner=False)
def series(key: str, distance: int) -> dict[str, object]:
    return by_distance(scheme(key), distance)


@st.cache_data(max_entries=16, show_spinner=False)
def curves(keys: tuple[str, ...], dtype: str) -> tuple[kvcache.CacheCurve, ...]:
    return tuple(kvcache.curve(catalog.variant_config(k), dtype, k) for k in keys)


@st.cache_data(max_entries=32, show_spinner=False)
def plan(key: str, context: int, dtype: str) -> kvcache.CachePlan:
    return kvcache.plan(catalog.variant_config(key), context, dtype, key)


@st.cache_data(max_entries=16, show_spinner=False)
def weight_bytes(keys: tuple[str, ...], dtype: str) -> dict[str, int]:
    """Each variant's weights in ``dtype`` (the catalog's parameter counts; int8 counted as one byte)."""
    params, item = census.catalog_params(), kvcache.dtype_of(dtype)[1]
    return {k: params[k] * item for k in keys if k in params}


@cache_complete(max_entries=4, show_spinner=False)
@workers.queued
def live(ref: ModelRef, text: str, new_tokens: int, device: str = "auto",
         dtype: str = "auto") -> cachelive.CacheMeasurement:
    """Greedy generation with and without the cache on ``ref`` (the bundled Gemma), and the cache it left."""
    return cachelive.measure_model(ref.spec, text, new_tokens, device=device, dtype=dtype, models_dir=ref.models_dir)
