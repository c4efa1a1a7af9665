"""Cached wrappers of the live-model area (Models page, Fill-mask page).

Models are NOT wrapped in ``st.cache_resource``: ``explorer.loading.load_model`` keeps one
process-wide, memory-bounded, thread-safe LRU cache shared by every session, and a second
reference here would stop it from ever freeing memory. Results are ``st.cache_data``
(small frozen dataclasses, hashable arguments, bounded): a second identical request is
answered without touching the model. ``stamp`` arguments make a re-saved checkpoint miss
the cache. ExplorerErrors are never cached: they reach ``ui.guard``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import streamlit as st

from explorer import fillmask, loading, weights
from explorer.errors import ExplorerError


def models_dir() -> str | None:
    """The weights directory typed on the Models/Fill-mask page, else EXPLORER_MODELS_DIR."""
    typed = (st.session_state.get("models_dir") or "").strip()
    return typed or os.environ.get("EXPLORER_MODELS_DIR") or None


def plan(spec: str, directory: str | None, allow_random: bool) -> tuple[bool, str]:
    """(run with random weights?, cache stamp) for one model: real weights win when present."""
    try:
        status = weights.locate(spec, directory)
    except ExplorerError:
        return False, "unresolved"  # the fill call raises the clear message
    if status.status == "ready":
        return False, f"{status.path}@{loading.weights_stamp(status.path)}"
    if allow_random and status.status == "not present":
        return True, "random"
    return False, status.status


def check_prompt(prompt: str) -> str:
    """The cleaned prompt, or an ExplorerError saying what is wrong with it (checked once per page run)."""
    return fillmask.clean_text(prompt)


@st.cache_data(max_entries=256, show_spinner=False)
def fill(spec: str, prompt: str, top_k: int, random_weights: bool, directory: str | None,
         stamp: str) -> fillmask.ModelFill:
    """One model's top-k for every mask of ``prompt`` (``stamp`` only keys the cache)."""
    lm = loading.load_model(spec, "masked-lm", random_weights=random_weights, models_dir=directory)
    return fillmask.fill_one(lm, prompt, top_k)


@st.cache_data(max_entries=64, show_spinner=False)
def electra(generator: str, discriminator: str, text: str, fraction: float, seed: int,
            random_weights: bool, directory: str | None, stamp: str) -> fillmask.ReplacedTokens:
    """ELECTRA's generator corrupts ``text``; its discriminator scores every token."""
    gen = loading.load_model(generator, "masked-lm", random_weights=random_weights, models_dir=directory)
    disc = loading.load_model(discriminator, "electra-discriminator", random_weights=random_weights,
                              models_dir=directory)
    return fillmask.electra_replaced(gen, disc, text, fraction, seed)


@st.cache_data(max_entries=8, show_spinner=False)
def mlm_keys() -> list[str]:
    return fillmask.mlm_keys()


@st.cache_data(max_entries=8, show_spinner=False)
def electra_pairs() -> dict[str, tuple[str, str]]:
    return fillmask.electra_pairs()


@st.cache_data(max_entries=2, show_spinner=False)
def checkpoints() -> dict[str, str | None]:
    """Catalog key -> the published checkpoint (hub id) the weights manager looks for."""
    from explorer import catalog

    return {v.key: v.reference_checkpoint for v in catalog.load_catalog().values()}


def statuses(directory: str | None) -> list[weights.WeightsStatus]:
    """Status of every variant: not cached, the file system is the truth (downloads show at once)."""
    return weights.status_all(directory)


def locate(path: str, directory: str | None) -> weights.WeightsStatus:
    return weights.locate(path, directory)


def download(key: str, directory: str | None, progress: Callable[[float, str], None]) -> weights.WeightsStatus:
    return weights.download(key, directory, progress)


def in_memory() -> list[dict]:
    """Models held by the process-wide cache (all sessions), least recently used first."""
    return loading.cache_info()


def free_memory() -> None:
    loading.clear_cache()
    fill.clear()
    electra.clear()


def device() -> str:
    return loading.best_device()
