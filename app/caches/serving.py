"""Cached wrappers of served models (every live page that offers them calls these, never the library directly).

Endpoints are the operator's (:func:`explorer.serving.endpoints.configured`) plus, on a private machine, those
typed on the Models page in this session. Results are ``st.cache_data`` keyed by the :class:`Endpoint` itself
(frozen, hashable: a changed URL or model misses the cache) with a short ``ttl``, since a server can change
under us. Remote work runs under ``workers.remote``: the request budget applies, no local model slot is taken.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace

import streamlit as st

from explorer.core.notices import Notice
from explorer.runtime import workers
from explorer.runtime.cancel import RequestStopped
from explorer.serving import backend, decoding, endpoints, probe
from explorer.serving.endpoints import Endpoint
from explorer.serving.tokenizer import ServedTokens
from explorer.tasks.generation import DecodingSettings, Generation, NextToken

TYPED = "_served_typed"  # session key: endpoints typed on the Models page (a tuple of Endpoint)


def typed() -> tuple[Endpoint, ...]:
    return tuple(st.session_state.get(TYPED, ()))


def add_typed(ep: Endpoint) -> None:
    """Keep an endpoint typed on the Models page for this session (a name used again replaces the old one)."""
    st.session_state[TYPED] = tuple(e for e in typed() if e.name != ep.name) + (ep,)
    probe.forget(ep)


def all_endpoints() -> tuple[Endpoint, ...]:
    """The operator's endpoints, then this session's typed ones (a configuration error reaches ``ui.guard``)."""
    operator = endpoints.configured()
    return operator + tuple(e for e in typed() if e.name not in {c.name for c in operator})


def endpoint(name: str) -> Endpoint:
    return endpoints.find(name, typed())


PROBE_AGE = 60.0  # seconds a probe is reused: a server that comes up or restarts is seen soon


@st.cache_data(max_entries=32, ttl=PROBE_AGE, show_spinner="Asking the servers what they can do…")
@workers.remote
def capabilities_of(eps: tuple[Endpoint, ...]) -> tuple[probe.Capabilities, ...]:
    """Several endpoints' probes at once (each a minute): a page waits for the slowest, not for their sum."""
    return probe.capabilities_many(eps, max_age=PROBE_AGE)


@st.cache_data(max_entries=64, ttl=600, show_spinner="Asking the served model…")
@workers.remote
def next_token(ep: Endpoint, prompt: str, top_k: int) -> NextToken:
    return decoding.next_token(ep, prompt, top_k)


@st.cache_data(max_entries=64, ttl=600, show_spinner="The server writes the whole continuation…")
@workers.remote
def fast_generation(ep: Endpoint, prompt: str, settings: DecodingSettings) -> Generation:
    return decoding.fast(ep, prompt, settings)


@st.cache_data(max_entries=32, ttl=600, show_spinner="Asking the server's tokenizer…")
@workers.remote
def tokens(ep: Endpoint, text: str) -> ServedTokens:
    """The text as the served model's own tokenizer splits it (its server's tokenize route)."""
    return backend.served(ep).tokens(text)


MAX_DECODERS = 8  # live served decoders kept per session (each is a prefix and a few numbers)


def _decoders() -> OrderedDict:
    return st.session_state.setdefault("_served_decoders", OrderedDict())


@workers.remote
def generation(ep: Endpoint, prompt: str, settings: DecodingSettings, steps: int) -> Generation:
    """The first ``steps`` tokens of a strategy, decoded from the client; the session's decoder continues where
    it stopped (the Step button asks the server for one more token, not for the whole prefix again)."""
    live, key = _decoders(), (ep, prompt, settings)
    if key not in live or len(live[key][1].steps) > steps:
        live[key] = decoding.start(ep, prompt, settings)
    live.move_to_end(key)
    while len(live) > MAX_DECODERS:
        live.popitem(last=False)
    caps, decoder, notices = live[key]
    try:
        decoder.run(until=steps)
    except RequestStopped as err:  # out of budget: the tokens so far, and why there are not more
        if err.reason == "gone":
            raise
        done = decoding.result(ep, caps, prompt, decoder, notices)
        return replace(done, notices=(*done.notices, Notice("stopped", str(err))))
    return decoding.result(ep, caps, prompt, decoder, notices)
