"""Cached wrappers of the Results page: published rows, the cross-paper GLUE view, budgets, variant costs, speed."""

from __future__ import annotations

import streamlit as st

from app.caches.anytime import cache_complete
from explorer.architecture import budgets
from explorer.papers import claims, crosspaper, results, scaling, speed
from explorer.runtime import workers


@st.cache_data(max_entries=32, show_spinner=False)
def rows(benchmark: str) -> list[results.Row]:
    return results.rows(benchmark)


@st.cache_data(max_entries=32, show_spinner="Counting parameters and FLOPs of the scored variants...")
def costs(keys: tuple[str, ...]) -> dict[str, tuple[int, int]]:
    return results.costs(keys)


@cache_complete(max_entries=8, show_spinner=False)
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def measure(keys: tuple[str, str], seq_len: int, runs: int) -> speed.Speed:
    return speed.measure(keys, seq_len=seq_len, runs=runs)


@st.cache_data(max_entries=4, show_spinner=False)
def glue_view(split: str | None) -> list[dict]:
    return crosspaper.glue_view(split)


@st.cache_data(max_entries=32, show_spinner=False)
def train_flops(keys: tuple[str, ...]) -> dict[str, float | None]:
    return {key: budgets.train_flops(key) for key in keys}


@st.cache_data(max_entries=1, show_spinner=False)
def placements() -> list[scaling.ScalingPoint]:
    return scaling.placements()


@st.cache_data(max_entries=1, show_spinner=False)
def scaling_unplaced() -> dict[str, str]:
    """Variants the scaling plots leave out though their budget has tokens, and why."""
    return scaling.unplaced()


@st.cache_data(max_entries=1, show_spinner=False)
def budget_table() -> list[dict]:
    return [b.to_dict() for b in budgets.budgets()]


@st.cache_data(max_entries=2, show_spinner=False)
def pretraining_claims(stamp: int) -> claims.Report:
    """The committed claims measurement; ``stamp`` (the file's mtime) makes a rewritten file read again."""
    return claims.load()


@st.cache_data(max_entries=1, show_spinner=False)
def sources_by_kind() -> dict[str, list[str]]:
    """The works whose rows cite a README, an abstract or a model card rather than a paper's table."""
    return results.sources_by_kind()
