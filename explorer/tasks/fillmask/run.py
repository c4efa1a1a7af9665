"""Fill-mask side by side: every model's top-k words for every blank of one prompt.

:func:`fill_mask` is the one entry point of the page and of ``python -m explorer fill-mask``: models (names, or refs
resolved once by :func:`explorer.runtime.resolve.resolve`) and a prompt in, a :class:`FillMaskResult` out. How a
model answers depends on the task it loads as (``FILLERS``: a masked LM fills its mask token, a decoder scores
candidates over the whole sentence).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from explorer.core.errors import ExplorerError
from explorer.runtime import cancel, footprint, placement, resolve
from explorer.runtime.loading import LoadedModel, load_model
from explorer.runtime.resolve import ModelRef
from explorer.tasks.causal import column as causal_column  # a module: it imports this package's result types
from explorer.tasks.fillmask.masked import check_top_k, fill_clean
from explorer.tasks.fillmask.prompt import MARKER, clean_text
from explorer.tasks.fillmask.result import FillMaskResult, ModelFill

__all__ = ["FILLERS", "Filler", "fill_mask", "picked_models", "resolved"]


# (resolved model, cleaned prompt, checked top_k, loader, answer_tokens) -> ModelFill
Filler = Callable[[ModelRef, str, int, Callable[..., LoadedModel], int], ModelFill]


def _fill_masked_lm(ref: ModelRef, text: str, top_k: int,
                    loader: Callable[..., LoadedModel], answer_tokens: int = 1) -> ModelFill:
    """A masked LM: its own mask token at every blank, top-k over the vocabulary (one token per
    [MASK] by construction: ``answer_tokens`` is a decoder's option)."""
    lm = loader(ref, "masked-lm", purpose="Fill-mask")
    return fill_clean(lm, text, top_k)


def _fill_causal_lm(ref: ModelRef, text: str, top_k: int,
                    loader: Callable[..., LoadedModel], answer_tokens: int = 1) -> ModelFill:
    """A decoder: left-context candidates ranked again by the whole sentence (explorer.tasks.causal); with
    ``answer_tokens`` > 1, answers of several tokens (a number, a name) from a short beam."""
    return causal_column.fill_causal_lm(ref, text, top_k, loader, answer_tokens)


# How each kind of model answers a fill-mask prompt (one function per loading task; the result is a ModelFill).
FILLERS: dict[str, Filler] = {"masked-lm": _fill_masked_lm, "causal-lm": _fill_causal_lm}


def picked_models(models: Sequence[str | ModelRef], top_k: int) -> list[str | ModelRef]:
    """The models asked for, blanks dropped and each once; ExplorerError for none or a bad ``top_k``."""
    picked = [m if isinstance(m, ModelRef) else m.strip() for m in models if isinstance(m, ModelRef) or m and m.strip()]
    if not picked:
        raise ExplorerError("Pick at least one model (a catalog key or a save_pretrained directory).")
    check_top_k(top_k)
    return list(dict.fromkeys(picked))  # a model asked twice answers once


def resolved(models: Sequence[str | ModelRef], top_k: int, models_dir: str | None, *, random_weights: bool = False,
             allow_random: bool = False) -> list[ModelRef]:
    """The models asked for, each resolved once (a page passes refs it resolved itself; they stay as they are)."""
    return [m if isinstance(m, ModelRef) else resolve.resolve(m, models_dir, allow_random=allow_random,
                                                                random_weights=random_weights)
            for m in picked_models(models, top_k)]


def fill_mask(models: Sequence[str | ModelRef], prompt: str, top_k: int = 5, *, random_weights: bool = False,
              allow_random: bool = False, models_dir: str | None = None,
              loader: Callable[..., LoadedModel] = load_model, answer_tokens: int = 1,
              device: str | None = None, dtype: str | None = None) -> FillMaskResult:
    """Every model's top-k for every mask of one prompt, side by side (the page and the CLI call this).

    ``models``: names, or refs resolved already (:func:`explorer.runtime.resolve.resolve`: the page resolves once
    and keys its cache on them). ``random_weights`` runs every named model untrained; ``allow_random`` only those
    whose weights are not on disk. ``answer_tokens``: a decoder's answers may have up to this many
    tokens (1..6, :mod:`explorer.tasks.causal.fill`); masked LMs fill one token per [MASK] whatever it is.
    ``device``/``dtype``: where and in what precision every model runs (:mod:`explorer.runtime.placement`).
    A model that cannot answer (missing weights, no MLM head)
    is listed in ``errors`` and the others still answer; a bad prompt raises ExplorerError once for all.
    """
    text = clean_text(prompt)
    chosen = placement.Placement.parse(device, dtype)
    chosen.resolve()  # a device this machine lacks is one message, not one per model
    loader = functools.partial(loader, **chosen.kwargs())  # every filler's load honours the choice
    refs = {r.spec: r for r in resolved(models, top_k, models_dir, random_weights=random_weights,
                                        allow_random=allow_random)}
    # a server request loads only the models that fit its memory budget (explorer.runtime.footprint); the others are
    # named
    kinds = {s: r.task("masked-lm") for s, r in refs.items()}
    specs, dropped, left = footprint.fit_request(list(refs.values()), kinds, chosen.resolve()[1])
    fills, errors = [], [(spec, footprint.skipped_message([(spec, size)], left)) for spec, size in dropped]
    for spec in specs:
        cancel.check()  # one model after another: a request out of budget stops before the next load
        try:
            fills.append(FILLERS[kinds[spec]](refs[spec], text, int(top_k), loader, answer_tokens))
        except ExplorerError as err:
            errors.append((spec, str(err)))
    return FillMaskResult(text, len(MARKER.findall(text)), tuple(fills), tuple(errors), tuple(s for s, _ in dropped))
