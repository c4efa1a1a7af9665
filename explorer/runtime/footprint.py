"""A model's memory footprint before it is loaded, and which of a request's models fit its budget.

A shared link can ask one page for eight untrained models (``/fill-mask?models=deberta-v2-xlarge,
albert-xxlarge,...``: 43 s, a 10.6 GB peak). Before loading anything, each model's bytes are
estimated (catalog keys: the parameter counts ``python -m explorer prepare`` stored; directories: their
safetensors headers), models already in memory count nothing, and the models are taken in the order
asked while they fit what the request may still add (:func:`explorer.runtime.cancel.memory_left`); the
others are named in a message. Outside a server request there is no request budget: all are kept.

>>> fit([("a", 3), ("b", 5), ("c", 1)], budget=4)
(['a', 'c'], [('b', 5)])
>>> fit([("huge", 9), ("b", 1)], budget=4)  # the first model always loads (the cache's rule too)
(['huge'], [('b', 1)])
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.architecture import membudget
from explorer.core import persist
from explorer.runtime import cancel, modelcache
from explorer.runtime.resolve import ModelRef

if TYPE_CHECKING:  # typing only: torch loads with the first model
    import torch

__all__ = ["estimate", "fit", "fit_request", "skipped_message"]


def _catalog_params(key: str) -> int | None:
    entry = persist.load("catalog-params").get(key)  # stored by `prepare`: never computed here
    return int(entry["params"]) if isinstance(entry, dict) and "params" in entry else None


def estimate(ref: ModelRef, dtype: str | torch.dtype = "float32") -> int:
    """Bytes the resolved model will take once loaded in ``dtype`` (half of float32's in bfloat16/float16; 0 when it
    cannot be told before loading: a bad name or path, whose load says what is wrong)."""
    params = _catalog_params(ref.spec)
    if params is None:
        path = ref.weights_dir
        if path and list(Path(path).glob("*.safetensors")):
            params = membudget.checkpoint_parameters(path)
    return membudget.estimate_bytes(params, dtype) if params else 0


def fit(sizes: Sequence[tuple[str, int]], budget: int) -> tuple[list[str], list[tuple[str, int]]]:
    """(specs kept in order while their bytes fit ``budget``, (spec, bytes) left out); the first stays."""
    kept: list[str] = []
    dropped: list[tuple[str, int]] = []
    used = 0
    for spec, size in sizes:
        if not kept or used + size <= budget:
            kept.append(spec)
            used += size
        else:
            dropped.append((spec, size))
    return kept, dropped


def fit_request(refs: Sequence[ModelRef], task_of: dict[str, str], dtype: str | torch.dtype = "float32",
                ) -> tuple[list[str], list[tuple[str, int]], int]:
    """The names of the resolved models this server request may load (all outside a request), those left out, and
    the budget; each model counts the bytes of the ``dtype`` it loads in."""
    specs = [r.spec for r in refs]
    left = cancel.memory_left()
    if left is None or len(specs) < 2:
        return specs, [], left or 0
    held = {name for name, task in modelcache.held_names() if task == task_of.get(name)}
    sizes = [(r.spec, 0 if r.spec in held else estimate(r, dtype)) for r in refs]
    kept, dropped = fit(sizes, left)
    return kept, dropped, left


def skipped_message(dropped: Sequence[tuple[str, int]], left: int) -> str:
    """One sentence naming the models left out and why."""
    token = cancel.current()
    why = f" ({token.budget.why})" if token else ""
    names = ", ".join(f"{spec} (~{size / 2**30:.1f} GB)" for spec, size in dropped)
    return (f"Not loaded, to keep this request within the {left / 2**30:.1f} GB of memory it may still use"
            f"{why}: {names}. Pick fewer or smaller models, or run them from the command line "
            "(python -m explorer fill-mask), which has no such limit.")
