"""Caches of the compression lab: the original and each method, cached apart (``st.cache_data``, bounded).

The page calls :func:`run`, which hands these caches to :func:`explorer.compression.study.run`: the library checks
the methods, measures the original once per :class:`~explorer.compression.result.Settings` (:func:`baseline`),
then each method against it (:func:`one_method`), reports progress per method, and computes the ratios. Each
method is its own server request with its own time budget (:mod:`explorer.runtime.cancel`), and a method
measured once answers from the cache when the page asks again with more methods; :func:`one_method` takes the
original from :func:`baseline`'s cache, so it is measured once however many methods follow. The model comes from
``explorer.runtime.loading``'s one process-wide cache (never a second reference here); each compressed copy lives
only while it is measured. A request stopped by its budget raises (nothing is cached).
"""

from __future__ import annotations

import streamlit as st

from app.caches.anytime import cache_complete
from explorer.compression import study
from explorer.compression.result import Progress
from explorer.runtime import workers
from explorer.runtime.resolve import resolve


@st.cache_data(max_entries=32, show_spinner=False, ttl=60)
def measured_as_decoder(model: str, models_dir: str | None = None) -> bool:
    """Whether the study measures ``model`` as a decoder (the library's one rule, :class:`ModelRef`)."""
    return resolve(model, models_dir).decoder


@cache_complete(max_entries=16, show_spinner=False)
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def baseline(wanted: study.Settings) -> study.Baseline:
    """The original measured for ``wanted`` (model, device, prompt, repeats, early exit or copies)."""
    return study.baseline(wanted)


@cache_complete(max_entries=64, show_spinner=False)
@workers.queued
def one_method(wanted: study.Settings, method: str) -> study.Row:
    """``method`` measured against the cached original of ``wanted``."""
    return study.method_row(baseline(wanted), method)


def run(model: str, methods: tuple[str, ...], prompt: str, device: str, models_dir: str | None,
        progress: Progress) -> study.Study:
    """The study of ``methods`` on ``model`` from the two caches above (not cached itself: both parts are)."""
    return study.run(model, methods, device=device, models_dir=models_dir, prompt=prompt, progress=progress,
                     original=baseline, one_method=one_method)
