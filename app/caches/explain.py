"""Cached wrappers of "Why this prediction": the lens, attributions (local and served), the tuned lens's card.

Results are ``st.cache_data`` keyed by the :class:`~explorer.runtime.resolve.ModelRef` (its weights' stamp
included) or the :class:`~explorer.serving.endpoints.Endpoint`, the text and every choice, with the sidebar's
device and precision. Local work waits for a model slot (``workers.queued``); served work only for the
endpoint's own bound (``workers.remote``). A tuned-lens training is a background job, not a cached result
(:mod:`explorer.explain.background`): its card is read again once it is done.
"""

from __future__ import annotations

import streamlit as st

from app.caches.anytime import cache_complete
from explorer.architecture import catalog
from explorer.explain import attribution, lens, parts, served, translator
from explorer.explain.attribution import Attribution, Steps
from explorer.explain.lens import Lens
from explorer.explain.methods import METHODS
from explorer.runtime import bundled, cancel, workers
from explorer.runtime.resolve import ModelRef
from explorer.serving.endpoints import Endpoint
from explorer.tasks import defaults
from explorer.tasks.similarity import BI_ENCODER

DEFAULT_MODELS = (bundled.KEY, BI_ENCODER)  # the two real models every clone has: a decoder and a sentence encoder
LOCAL_PART_TOKENS = 32  # tokens occluded per request of a local model (seconds of Gemma 3 270M on 2 cores)
SERVED_PART_TOKENS = 8  # a served model's: a request per token left out, about half a second each on a CPU engine


@st.cache_data(max_entries=8, show_spinner=False, ttl=60)
def offered(directory: str | None) -> list[str]:
    """The bundled decoder and MiniLM, the masked LMs, T5 and BART, then the lab's models (a minute: new ones
    appear)."""
    seq2seq = [k for k in defaults.infill_keys(directory) if k != bundled.KEY and not k.startswith("lab/")]
    keys = [*DEFAULT_MODELS, *defaults.mlm_keys(), *seq2seq, *defaults.lab_models("any", directory)]
    return [k for k in dict.fromkeys(keys) if k.startswith("lab/") or k in catalog.keys()]


@cache_complete(max_entries=64, show_spinner=False)
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def logit_lens(ref: ModelRef, text: str, target: str | None, position: int | None, tuned: bool,
               device: str = "auto", dtype: str = "auto") -> Lens:
    """Every layer's reading of ``ref`` on ``text`` (the grid of every position included)."""
    return lens.run(ref, text, target, position=position, tuned=tuned, device=device, dtype=dtype)


@cache_complete(max_entries=128, show_spinner=False)
@workers.queued
def _attribute(ref: ModelRef, text: str, target: str | None, foil: str | None, pair: str | None, method: str,
               steps: Steps, device: str, dtype: str, span: tuple[int, int] | None) -> Attribution:
    return attribution.run(ref, text, target, method, foil=foil, pair=pair, steps=steps, device=device,
                           dtype=dtype, span=span)


def attribute(ref: ModelRef, text: str, target: str | None, foil: str | None, pair: str | None, method: str,
              steps: Steps, device: str = "auto", dtype: str = "auto") -> Attribution:
    """``method``'s score of every token: occlusion in parts within the page's budget, continued when asked again
    (:mod:`explorer.explain.parts`); the other methods in one request, refused before work when they cannot fit."""
    if not METHODS[method].anytime:
        return _attribute(ref, text, target, foil, pair, method, steps, device, dtype, None)
    return parts.in_parts(lambda a, b: _attribute(ref, text, target, foil, pair, method, steps, device, dtype, (a, b)),
                          LOCAL_PART_TOKENS, _budget())


@cache_complete(max_entries=64, ttl=600, show_spinner=False)
@workers.remote  # the request's budget, no local model slot: the engine does the work
def _served_part(ep: Endpoint, text: str, target: str | None, foil: str | None, span: tuple[int, int]) -> Attribution:
    return served.attribute(ep, text, target, "occlusion", foil=foil, span=span)


def served_occlusion(ep: Endpoint, text: str, target: str | None, foil: str | None) -> Attribution:
    """Occlusion through a served decoder's scoring, in parts as a local model's (ten minutes: a server can
    change)."""
    return parts.in_parts(lambda a, b: _served_part(ep, text, target, foil, (a, b)), SERVED_PART_TOKENS, _budget())


def _budget() -> float:
    """Seconds a text's occlusion parts may take together on the page: one request's budget on this device."""
    return cancel.request_budget().seconds


@st.cache_data(max_entries=64, ttl=10, show_spinner=False)
def tuned_card(ref: ModelRef) -> dict[str, object] | None:
    """The card of the tuned lens trained for ``ref``'s current weights, or None (ten seconds: a training ends)."""
    return translator.find(ref.path, ref.spec)
