"""The Interventions page's patching grids are kept by the server, not by a session: a second visitor asking for the
same grid (the page's default, say) gets the one computed for the first, without a forward; a grid a stopped
request left partial is not kept; the store keeps the last ``GRIDS_KEPT``; "Free memory" empties it."""

from __future__ import annotations

import dataclasses
import math

import pytest
import streamlit as st

from app.caches import interventions as cache
from explorer.interventions import patching
from explorer.interventions.models import local_ref
from tests.tiny_gemma import save_tiny_gemma

PAIR = cache.PairReq("The Eiffel Tower is in the city of", "The Colosseum is in the city of", "Paris", "Rome")


@pytest.fixture()
def where(tmp_path_factory) -> cache.Target:
    st.cache_resource.clear()  # a store of its own (the server's would be shared with other tests)
    return cache.Target(local_ref(str(save_tiny_gemma(tmp_path_factory.mktemp("gemma")))), device="cpu")


@pytest.fixture()
def forwards(monkeypatch) -> list[str]:
    """The sites the library was asked to patch: the real :func:`patching.patch` runs each time."""
    asked: list[str] = []
    real = patching.patch

    def counted(*args, **kwargs):
        asked.append(kwargs["site"])
        return real(*args, **kwargs)

    monkeypatch.setattr(patching, "patch", counted)
    return asked


def test_a_grid_is_computed_once_for_every_session(where, forwards) -> None:
    first = cache.patch(where, PAIR, "resid", "logit-diff")
    assert cache.patch(where, PAIR, "resid", "logit-diff") is first and forwards == ["resid"]
    cache.patch(where, PAIR, "mlp", "logit-diff")  # another site: another grid
    assert forwards == ["resid", "mlp"]
    st.cache_resource.clear()  # "Free memory"
    assert cache.patch(where, PAIR, "resid", "logit-diff") is not first and forwards == ["resid", "mlp", "resid"]


def test_the_store_keeps_the_last_few_and_never_a_partial_grid(where, forwards, monkeypatch) -> None:
    monkeypatch.setattr(cache, "GRIDS_KEPT", 2)
    for site in ("resid", "attn", "mlp"):
        cache.patch(where, PAIR, site, "logit-diff")
    cache.patch(where, PAIR, "mlp", "logit-diff")
    cache.patch(where, PAIR, "attn", "logit-diff")
    assert forwards == ["resid", "attn", "mlp"]  # the last two were kept
    cache.patch(where, PAIR, "resid", "logit-diff")
    assert forwards == ["resid", "attn", "mlp", "resid"]  # the oldest had gone

    whole = cache.patch(where, PAIR, "heads", "logit-diff")
    assert whole.plan is not None and whole.cells_done == whole.plan.cells
    stopped = dataclasses.replace(whole, values=((math.nan,) * len(whole.columns),) + whole.values[1:])
    monkeypatch.setattr(cache, "_patch", lambda *args: stopped)  # what a request stopped after its first row gives
    assert cache.patch(where, PAIR, "attn", "kl") is stopped
    assert cache._grids().get((where, PAIR, "attn", "kl")) is None  # asked again, it is computed whole
