"""Served models beside the local ones: one picker every live page uses (the choice lives in the URL).

``pick(...)`` lists the operator's endpoints (and this session's typed ones); those that can do what the page
needs are selected by default, so ``make run`` with an endpoint configured shows it at once; ``?served=a,b`` in a
link picks some, ``?served=none`` none. Each picked endpoint is probed (cached for a minute); one that is down,
or lacks what the page needs (``capability``: ``top_k``, ``prompt_logprobs`` or ``embeddings``), is named with
the reason and left out, and the page goes on with the others.
"""

from __future__ import annotations

import streamlit as st

from app import ui
from app.caches import serving as cache
from explorer.core.errors import ExplorerError
from explorer.serving.endpoints import Endpoint

NONE = "none"


def pick(page: str, capability: str, purpose: str, param: str = "served") -> list[Endpoint]:
    """The served endpoints to show on ``page`` that can do ``capability`` (each refusal said once, in words)."""
    try:
        eps = {e.name: e for e in cache.all_endpoints()}
    except ExplorerError as err:
        st.warning(ui.markdown_safe(f"Served models are not available: {err}"), icon=":material/cloud_off:")
        return []
    if not eps:
        return []
    names = list(eps)
    raw = st.query_params.get(param)
    # selected by default: those that can, and those that are down (so the page says why they are missing);
    # not those that answer but lack the capability (an embeddings server on the Decoding page). Probed once a minute.
    able = [n for n in names if _can(caps := cache.capabilities(eps[n]), capability) or not caps.reachable]
    default = [] if raw == NONE else ui.query_list(param, able, names)
    chosen = st.multiselect("Served models (an inference engine's OpenAI-compatible API)", names, default=default,
                            key=f"{page}_served", format_func=lambda n: eps[n].shown,
                            help="Configured by whoever runs this explorer (EXPLORER_ENDPOINT_URL / "
                                 "EXPLORER_ENDPOINTS_FILE), or added on the Models page on your own machine.")
    st.query_params[param] = ",".join(chosen) if chosen else NONE
    usable = []
    for name in chosen:
        ep = eps[name]
        caps = cache.capabilities(ep)
        why = caps.why_not(capability) if caps.reachable else caps.error
        if not _can(caps, capability):
            st.warning(ui.markdown_safe(f"**{ep.shown}** is left out: it cannot do {purpose} here "
                                        f"({why or 'the server does not offer it'})."), icon=":material/cloud_off:")
            continue
        usable.append(ep)
    return usable


def _can(caps, capability: str) -> bool:
    return bool(caps.reachable and caps.why_not(capability) is None and getattr(caps, capability, False))
