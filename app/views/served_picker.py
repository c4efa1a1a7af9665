"""Served models beside the local ones: one picker every live page uses (the choice lives in the URL).

``pick(...)`` lists the operator's endpoints (and this session's typed ones). By default it selects, among the
first :data:`MAX_PROBED` (probed together, once a minute), those that can do what the page needs and those that
are down (so the page says why they are missing), one per engine and model: a second copy of the same model
(``make run-served`` starts the bundled Gemma twice, once for embeddings) would double the page's work and show
nothing new. ``?served=a,b`` in a link picks some, ``?served=none`` none; at most :data:`MAX_PICKED`. Each picked
endpoint is probed; one that is down, answers its probe with garbage, or lacks what the page needs
(``capability``: ``top_k``, ``prompt_logprobs``, ``embeddings`` or ``tokenizer``) is named with the reason and left
out, and the page goes on with the others.
"""

from __future__ import annotations

import streamlit as st

from app import ui
from app.caches import serving as cache
from explorer.core.errors import ExplorerError
from explorer.serving.endpoints import Endpoint
from explorer.serving.probe import Capabilities

NONE = "none"
MAX_PROBED = 4  # endpoints probed to choose the defaults; the others are offered and probed once picked
MAX_PICKED = 4  # served models on one page: each adds its own requests to every answer


def _probed(eps: list[Endpoint]) -> dict[str, Capabilities | ExplorerError]:
    """Each endpoint's capabilities, or the error its probe ended with (a page never fails on a probe)."""
    try:
        return dict(zip((e.name for e in eps), cache.capabilities_of(tuple(eps)), strict=True))
    except ExplorerError as err:  # the page's budget ended, or a probe failed as a whole: said per endpoint
        return {e.name: err for e in eps}


def _can(caps: Capabilities | ExplorerError, capability: str) -> bool:
    return isinstance(caps, Capabilities) and caps.reachable and caps.why_not(capability) is None \
        and bool(getattr(caps, capability, False))


def _defaults(eps: dict[str, Endpoint], capability: str) -> list[str]:
    """The first endpoints that can (or are down), one per engine and model."""
    found = _probed(list(eps.values())[:MAX_PROBED])
    out, seen = [], set()
    for name, caps in found.items():
        if isinstance(caps, Capabilities) and _can(caps, capability):
            same = (caps.engine, (caps.model or eps[name].model).lower())
            if same in seen:
                continue
            seen.add(same)
        elif isinstance(caps, Capabilities) and caps.reachable:
            continue  # answers, but cannot do this page's work: not picked, so no warning about it
        out.append(name)
    return out


def _why(caps: Capabilities | ExplorerError, capability: str) -> str:
    if isinstance(caps, ExplorerError):
        return str(caps)
    return (caps.why_not(capability) if caps.reachable else caps.error) or "the server does not offer it"


def pick(page: str, capability: str, purpose: str, param: str = "served") -> list[Endpoint]:
    """The served endpoints to show on ``page`` that can do ``capability`` (each refusal said once, in words)."""
    try:
        eps = {e.name: e for e in cache.all_endpoints()}
    except ExplorerError as err:
        st.warning(ui.markdown_safe(f"Served models are not available: {err}"), icon=":material/cloud_off:")
        return []
    if not eps:
        return []
    names, raw = list(eps), st.query_params.get(param)
    linked = ui.query_list(param, [], names, limit=MAX_PICKED) if raw and raw != NONE else []
    default = [] if raw == NONE else linked or _defaults(eps, capability)  # a stale link: the defaults
    chosen = st.multiselect("Served models (an inference engine's OpenAI-compatible API)", names, default=default,
                            key=f"{page}_served", format_func=lambda n: eps[n].shown, max_selections=MAX_PICKED,
                            help="Configured by whoever runs this explorer (EXPLORER_ENDPOINT_URL / "
                                 "EXPLORER_ENDPOINTS_FILE), or added on the Models page on your own machine.")
    st.query_params[param] = ",".join(chosen) if chosen else NONE
    found = _probed([eps[n] for n in chosen]) if chosen else {}
    usable = []
    for name, caps in found.items():
        if _can(caps, capability):
            usable.append(eps[name])
            continue
        st.warning(f"**{ui.markdown_safe(eps[name].shown)}** is left out: "
                   + ui.markdown_safe(f"it cannot do {purpose} here ({_why(caps, capability).rstrip('.')})."),
                   icon=":material/cloud_off:")
    return usable
