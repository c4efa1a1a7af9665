"""Cached wrappers of served models: the endpoints, their probes, their tokenizers (the Decoding lab's next tokens and
generations, here or served, are ``app/caches/generation.py``'s, keyed by the backend).

Endpoints are the operator's (:func:`explorer.serving.endpoints.configured`) plus, on a private machine, those
typed on the Models page in this session. Results are ``st.cache_data`` keyed by the :class:`Endpoint` itself
(frozen, hashable: a changed URL or model misses the cache) with a short ``ttl``, since a server can change
under us. Remote work runs under ``workers.remote``: the request budget applies, no local model slot is taken.
"""

from __future__ import annotations

import streamlit as st

from app.caches.anytime import cache_complete
from explorer.runtime import workers
from explorer.serving import backend, endpoints, probe
from explorer.serving.endpoints import Endpoint
from explorer.serving.tokenizer import ServedTokens

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


@cache_complete(max_entries=32, ttl=PROBE_AGE, show_spinner="Asking the servers what they can do…")
@workers.remote
def capabilities_of(eps: tuple[Endpoint, ...]) -> tuple[probe.Capabilities, ...]:
    """Several endpoints' probes at once (each a minute): a page waits for the slowest, not for their sum."""
    return probe.capabilities_many(eps, max_age=PROBE_AGE)


@cache_complete(max_entries=32, ttl=600, show_spinner="Asking the server's tokenizer…")
@workers.remote
def tokens(ep: Endpoint, text: str) -> ServedTokens:
    """The text as the served model's own tokenizer splits it (its server's tokenize route)."""
    return backend.served(ep).tokens(text)
