"""Cached wrappers of the live-model area (Models page, Fill-mask page).

Models are NOT wrapped in ``st.cache_resource``: ``explorer.runtime.loading.load_model`` keeps one
process-wide, memory-bounded, thread-safe LRU cache shared by every session, and a second
reference here would stop it from ever freeing memory. Results are ``st.cache_data``
(small frozen dataclasses, hashable arguments, bounded): a second identical request is
answered without touching the model. Models come resolved (:class:`explorer.runtime.resolve.ModelRef`, made once
per script run by :func:`resolve`): their stamps make a re-saved checkpoint miss the cache, and the library asks
nothing about them again. ExplorerErrors are never cached: they reach ``ui.guard``.
"""

from __future__ import annotations

import streamlit as st

from app.caches.anytime import cache_complete
from app.caches.backends import BY_IDENT, TTL, scheduled
from explorer.runtime import fence, modelcache, workers
from explorer.runtime.resolve import ModelRef
from explorer.runtime.resolve import resolve as resolve_model
from explorer.serving.backend import Backend
from explorer.tasks import defaults, discriminator, fillmask
from explorer.tasks.fillmask import batch as fillbatch


def models_dir() -> str | None:
    """The weights directory typed on the Models page (a session value), else EXPLORER_MODELS_DIR."""
    typed = (st.session_state.get("models_dir") or "").strip()
    return typed or fence.models_dir_env() or None


@st.cache_data(max_entries=16, show_spinner=False, ttl=60)
def default_fill_models(directory: str | None) -> list[str]:
    """The bundled decoder and the masked LMs whose weights are on disk (a minute: downloads appear)."""
    return defaults.fill_mask_defaults(directory)


def resolve(specs: list[str], directory: str | None, allow_random: bool) -> tuple[ModelRef, ...]:
    """Each model resolved once for this script run (not cached: a download or a re-saved checkpoint shows at once;
    it reads a config and a few file times)."""
    return tuple(resolve_model(s, directory, allow_random=allow_random) for s in specs)


def _fill(model: Backend, prompt: str, top_k: int, answer_tokens: int) -> fillmask.FillMaskResult:
    return model.fill(prompt, top_k, answer_tokens)


@st.cache_data(max_entries=128, ttl=TTL, hash_funcs=BY_IDENT, show_spinner=False)
def fill(model: Backend, prompt: str, top_k: int, answer_tokens: int = 1) -> fillmask.FillMaskResult:
    """One model's top-k for every mask of ``prompt`` (a masked LM's, a local or served decoder's causal column), as
    one request of its own: each column answers as soon as its model is done, within its own budget, so a slow model
    is cut in its column and never holds back the others (keyed by the backend: the model resolved once, where it
    runs; or the endpoint)."""
    return scheduled(model, _fill, model, prompt, top_k, answer_tokens)


@cache_complete(max_entries=32, show_spinner=False)
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def fill_many(refs: tuple[ModelRef, ...], text: str, top_k: int, directory: str | None, answer_tokens: int,
              limit: int, device: str = "auto", dtype: str = "auto") -> fillbatch.BatchFill:
    """Every model's top-k for every line of ``text`` (one prompt per line), at most ``limit`` prompts."""
    return fillbatch.fill_mask_many(refs, text, top_k, models_dir=directory, answer_tokens=answer_tokens, limit=limit,
                                    device=device, dtype=dtype)


@st.cache_data(max_entries=4, ttl=60, show_spinner=False)
def page_model_limit(device: str = "auto") -> tuple[int, str]:
    """How many models one request may run on the chosen device, and why (free memory re-read every minute)."""
    from explorer.runtime import capacity
    from explorer.runtime.placement import resolve_device

    cap = capacity.page_models(capacity.device_facts(resolve_device(device)))
    return cap.value, cap.reason


@st.cache_data(max_entries=8, show_spinner=False)
def prompt_limit(device: str = "auto") -> int:
    """How many prompts one request runs on the chosen device (more on a GPU)."""
    from explorer.runtime.placement import resolve_device

    return fillbatch.page_prompt_limit(resolve_device(device))


@cache_complete(max_entries=64, show_spinner=False)
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def electra(generator: ModelRef, disc: ModelRef, text: str, fraction: float, seed: int, device: str = "auto",
            dtype: str = "auto") -> discriminator.ReplacedTokens:
    """ELECTRA's generator corrupts ``text``; its discriminator scores every token (keyed by the refs, whose
    stamps change with their weights)."""
    return discriminator.detect(generator, disc, text, fraction, seed, device=device, dtype=dtype)


@st.cache_data(max_entries=8, show_spinner=False, ttl=60)
def fill_keys(directory: str | None = None) -> list[str]:
    """The page's choices, the lab's trained models in ``directory`` included (a minute: new ones appear)."""
    return defaults.fill_keys(directory)


@st.cache_data(max_entries=16, show_spinner=False, ttl=60)
def lab_models(use: str, directory: str | None = None) -> dict[str, str]:
    """The pretraining lab's models in ``directory`` that serve ``use``, with their labels."""
    return defaults.lab_models(use, directory)



@st.cache_data(max_entries=8, show_spinner=False)
def electra_pairs() -> dict[str, tuple[str, str]]:
    """ELECTRA pair keys -> (generator, discriminator) from the catalog."""
    return discriminator.electra_pairs()


def free_memory() -> None:
    """Forget every loaded model and the results computed with them."""
    modelcache.clear_cache()
    fill.clear()
    fill_many.clear()
    electra.clear()

