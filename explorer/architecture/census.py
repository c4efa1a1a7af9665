"""Census of the catalog: the parameter count of every variant, kept in the on-disk cache.

Counting means building each variant on the meta device, which first imports its
transformers model module (~20 of them). The counts are stored under a fingerprint of
everything they depend on, so the overview page and ``python -m explorer list`` are
instant after the first run, and recount by themselves when a config or version changes.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from importlib.metadata import version

from explorer.architecture import catalog
from explorer.core import persist

__all__ = ["versions", "code_source", "catalog_params"]


def _params_fingerprint(key: str) -> str:
    """Everything a count depends on: the config, the head, our head code, library versions."""
    variant = catalog.get_variant(key)
    return persist.fingerprint(catalog.config_text(key), variant.head, variant.extra,
                               code_source(("explorer.architecture.custom_models", "explorer.architecture.build",
                                            "explorer.architecture.analysis")),
                               versions())


@functools.cache
def versions() -> tuple[str, str]:
    """The transformers and torch versions (read from package metadata: neither is imported)."""
    return version("transformers"), version("torch")


@functools.cache
def code_source(names: tuple[str, ...]) -> str:
    """The source text of the named modules of ours, for fingerprints of results they compute."""
    return "".join(_source(name) for name in names)


def _source(name: str) -> str:
    """``inspect.getsource`` of a module, without importing it when it is not loaded yet.

    Importing would import torch, and a warm ``list`` or ``compare`` must stay instant; the
    import system's loader gives the same text unexecuted (pytest's rewriting loader has no
    ``get_source``: then the module is imported).
    """
    if name in sys.modules:
        return inspect.getsource(sys.modules[name])
    spec = importlib.util.find_spec(name)
    get_source = getattr(spec.loader if spec else None, "get_source", None)
    return get_source(name) if get_source else inspect.getsource(importlib.import_module(name))


def catalog_params(progress: Callable[[float, str], None] | None = None) -> dict[str, int]:
    """``base_params_of_variant`` for every catalog variant, kept in the on-disk cache.

    ``progress(fraction, message)`` is called before each variant that must be computed.
    """
    stored = persist.load("catalog-params")
    keys = catalog.keys()
    out: dict[str, int] = {}
    for i, key in enumerate(keys):
        fp = _params_fingerprint(key)
        if stored.get(key, {}).get("fingerprint") != fp:
            if progress:
                progress(i / len(keys), f"Counting {catalog.get_variant(key).name}...")
            from explorer.architecture import analysis  # imports torch: only when something must be counted

            stored[key] = {"fingerprint": fp, "params": analysis.base_params_of_variant(key)}
        out[key] = int(stored[key]["params"])
    persist.save("catalog-params", stored)
    return out
