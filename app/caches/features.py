"""Cached wrappers of the Features page: the dictionaries a model has, one feature's dashboard, a text's active
features, a clamp; keyed by the model's ref (its stamp follows its weights) and the dictionary's folder."""

from __future__ import annotations

import streamlit as st

from app.caches.anytime import cache_complete
from explorer.features import requests
from explorer.features.active import Active
from explorer.features.clamp import Clamped
from explorer.features.dashboard import Card
from explorer.runtime import workers
from explorer.runtime.resolve import ModelRef

__all__ = ["active", "card", "clamp", "fits", "listed"]


@st.cache_data(max_entries=16, show_spinner=False, ttl=30)
def listed(ref: ModelRef) -> list[tuple[str, str]]:
    """(folder, label) of ``ref``'s dictionaries (half a minute: a newly trained one shows)."""
    return requests.listed(ref)


@st.cache_data(max_entries=32, show_spinner=False)
@workers.queued
def fits(ref: ModelRef, place: str, device: str = "auto", dtype: str = "auto") -> bool:
    """Whether the dictionary fits the model (one short forward; a misfit raises, and is not kept)."""
    return requests.fits(ref, place, device=device, dtype=dtype)


@cache_complete(max_entries=32, show_spinner=False)
@workers.queued  # model work waits its turn; a cached dashboard does not
def card(ref: ModelRef, place: str, feature: int, device: str = "auto", dtype: str = "auto") -> Card:
    return requests.card_of(ref, place, feature, device=device, dtype=dtype)


@cache_complete(max_entries=32, show_spinner=False)
@workers.queued
def active(ref: ModelRef, place: str, text: str, device: str = "auto", dtype: str = "auto") -> Active:
    return requests.active_of(ref, place, text, device=device, dtype=dtype)


@cache_complete(max_entries=32, show_spinner=False)
@workers.queued
def clamp(ref: ModelRef, place: str, feature: int, value: float, text: str, device: str = "auto",
          dtype: str = "auto") -> Clamped:
    return requests.clamp_of(ref, place, feature, value, text, device=device, dtype=dtype)
