"""Cached wrappers of "Why this prediction": the lens, attributions (local and served), the tuned lens's card.

A model is a :class:`~explorer.serving.backend.Backend`, here or served, asked the same way
(:mod:`explorer.explain.anywhere`); results are cached keyed by its ``ident`` (the ref with its weights' stamp and
the sidebar's device and precision, or the endpoint), the text and every choice, and its work scheduled as it needs
(:mod:`app.caches.backends`). A tuned-lens training is a background job, not a cached result
(:mod:`explorer.explain.background`): its card is read again once it is done.
"""

from __future__ import annotations

import streamlit as st

from app.caches.anytime import cache_complete
from app.caches.backends import BY_IDENT, TTL, scheduled
from explorer.architecture import catalog
from explorer.explain import anywhere, parts, translator
from explorer.explain.attribution import Attribution, Steps
from explorer.explain.lens import Lens
from explorer.explain.methods import METHODS
from explorer.runtime import bundled, cancel
from explorer.runtime.resolve import ModelRef
from explorer.serving.backend import Backend
from explorer.tasks import defaults
from explorer.tasks.similarity import BI_ENCODER

DEFAULT_MODELS = (bundled.KEY, BI_ENCODER)  # the two real models every clone has: a decoder and a sentence encoder


@st.cache_data(max_entries=8, show_spinner=False, ttl=60)
def offered(directory: str | None) -> list[str]:
    """The bundled decoder and MiniLM, the masked LMs, T5 and BART, then the lab's models (a minute: new ones
    appear)."""
    seq2seq = [k for k in defaults.infill_keys(directory) if k != bundled.KEY and not k.startswith("lab/")]
    keys = [*DEFAULT_MODELS, *defaults.mlm_keys(), *seq2seq, *defaults.lab_models("any", directory)]
    return [k for k in dict.fromkeys(keys) if k.startswith("lab/") or k in catalog.keys()]


@cache_complete(max_entries=64, ttl=TTL, hash_funcs=BY_IDENT, show_spinner=False)
def logit_lens(model: Backend, text: str, target: str | None, position: int | None, tuned: bool) -> Lens:
    """Every layer's reading of ``model`` on ``text`` (the grid of every position included)."""
    return scheduled(model, anywhere.lens_on, model, text, target, position, tuned)


@cache_complete(max_entries=128, ttl=TTL, hash_funcs=BY_IDENT, show_spinner=False)
def _attribute(model: Backend, text: str, target: str | None, foil: str | None, pair: str | None, method: str,
               steps: Steps, span: tuple[int, int] | None) -> Attribution:
    return scheduled(model, anywhere.attribute_on, model, text, target, method, foil=foil, pair=pair, steps=steps,
                     span=span)


def attribute(model: Backend, text: str, target: str | None, foil: str | None, pair: str | None, method: str,
              steps: Steps) -> Attribution:
    """``method``'s score of every token, here or served: occlusion in parts within the page's budget, continued
    when asked again (:mod:`explorer.explain.parts`); the other methods in one request, refused before work when
    they cannot fit."""
    if not METHODS[method].anytime:
        return _attribute(model, text, target, foil, pair, method, steps, None)
    return parts.in_parts(lambda a, b: _attribute(model, text, target, foil, pair, method, steps, (a, b)),
                          anywhere.part_tokens(model), _budget())


def _budget() -> float:
    """Seconds a text's occlusion parts may take together on the page: one request's budget on this device."""
    return cancel.request_budget().seconds


@st.cache_data(max_entries=64, ttl=10, show_spinner=False)
def tuned_card(ref: ModelRef) -> dict[str, object] | None:
    """The card of the tuned lens trained for ``ref``'s current weights, or None (ten seconds: a training ends)."""
    return translator.find(ref.path, ref.spec)
