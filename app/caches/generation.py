"""Cached wrappers of the decoding lab, one road for every model (the page calls these, never the library).

A model is a :class:`~explorer.serving.backend.Backend`, in this process or served; every wrapper keys on the
backend's ``ident`` and runs its work as the backend needs (:mod:`app.caches.backends`).

- ``prepared``: the one-time conversion of the bundled GGUF (``st.cache_resource``: once per
  process; the page's progress callback is not part of the key). Models themselves are not
  held here: ``explorer.runtime.loading`` keeps one memory-bounded LRU cache for every session.
- ``next_token``, ``fast_generation``: ``st.cache_data`` (hashable arguments, bounded, and a ``ttl``: a server
  can change under us).
- ``generation``: live step-by-step decoders kept per browser session (``st.session_state``),
  so the Step button continues from where the decoder stopped (a KV cache here, a prefix on a server)
  instead of starting over.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any

import streamlit as st

from app.caches.backends import BY_IDENT, TTL, scheduled
from explorer.core.notices import Notice
from explorer.runtime.cancel import RequestStopped
from explorer.runtime.resolve import resolve
from explorer.serving.backend import Backend
from explorer.tasks import generation as gen

MAX_DECODERS = 8  # live decoders kept per model and session (each holds a KV cache or a prefix)
MAX_LIVE = 40  # live decoders kept per session across models (a model typed earlier is let go)


def _next_token(model: Backend, prompt: str, top_k: int) -> gen.NextToken:
    return model.next_token(prompt, top_k)


def _fast_generation(model: Backend, prompt: str, settings: gen.DecodingSettings) -> gen.Generation:
    return model.generate(prompt, settings, fast=True)


@st.cache_resource(show_spinner=False, max_entries=4)
def prepared(model: str, _progress: Any = None, device: str = "auto", dtype: str = "auto") -> str:
    """The model ready to load (the bundled GGUF converted first, reporting to ``_progress``)."""
    gen.load_decoder(resolve(model), progress=_progress, device=device, dtype=dtype)
    return model


@st.cache_data(max_entries=64, ttl=TTL, hash_funcs=BY_IDENT, show_spinner="Running the prompt through the model…")
def next_token(model: Backend, prompt: str, top_k: int) -> gen.NextToken:
    return scheduled(model, _next_token, model, prompt, top_k)


@st.cache_data(max_entries=64, ttl=TTL, hash_funcs=BY_IDENT, show_spinner="The server writes the whole continuation…")
def fast_generation(model: Backend, prompt: str, settings: gen.DecodingSettings) -> gen.Generation:
    """The whole continuation in one request (a served model's fast mode)."""
    return scheduled(model, _fast_generation, model, prompt, settings)


def _decoders() -> OrderedDict:
    return st.session_state.setdefault("_decoding_lab_decoders", OrderedDict())


def _keep(live: OrderedDict, key: tuple) -> None:
    """``key`` most recent; the oldest let go past :data:`MAX_DECODERS` for its model or :data:`MAX_LIVE` in all."""
    live.move_to_end(key)
    same = [k for k in live if k[0] == key[0]]
    while len(same) > MAX_DECODERS:
        live.pop(same.pop(0))
    while len(live) > MAX_LIVE:
        live.popitem(last=False)


def generation(model: Backend, prompt: str, settings: gen.DecodingSettings, steps: int) -> gen.Generation:
    """The first ``steps`` tokens of this strategy, continuing this session's decoder when it can (a decoder is
    kept per backend: a local one's KV cache lives on its device)."""
    return scheduled(model, _generation, model, prompt, settings, steps)


def _generation(model: Backend, prompt: str, settings: gen.DecodingSettings, steps: int) -> gen.Generation:
    live, key = _decoders(), (model.ident, prompt, settings)
    if key not in live or live[key].done > steps:  # new settings, or asked for fewer tokens
        live[key] = model.start(prompt, settings)
    _keep(live, key)
    decoding = live[key]
    try:
        decoding.run(steps)
    except RequestStopped as err:  # out of budget: the tokens so far, and why there are not more
        if err.reason == "gone":  # nobody will see it; the decoder keeps its tokens for the next run
            raise
        done = decoding.result()
        return replace(done, notices=(*done.notices, Notice("stopped", str(err))))
    return decoding.result()
