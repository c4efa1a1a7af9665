"""The one-token decoding step, as fast as ``generate(cache_implementation="static")`` runs it.

A ``DynamicCache`` grows by ``torch.cat`` every step (each step copies the whole cache) and has no
fixed shapes, so nothing can be captured. A ``StaticCache`` (transformers 5.23: ``StaticCache(config=,
max_cache_len=)``, allocated on the first update, written in place with ``index_copy_``, the position
kept in a tensor) has fixed shapes: on CUDA the one-token step can then be compiled with CUDA graphs,
exactly as ``generate`` does (``model.get_compiled_call``, transformers' ``torch.compile(mode=
"reduce-overhead", fullgraph=True)`` of ``model.__call__``, shared with ``generate``). Everywhere else
the step stays eager: the CPU never compiles (minutes of compilation for no gain on a page).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from explorer.runtime.offload import input_device

if TYPE_CHECKING:  # typing only: transformers loads with the first model
    from transformers import PreTrainedModel

__all__ = ["make_cache", "step_call", "uses_cuda_graphs"]


def _placed_by_accelerate(model: torch.nn.Module) -> bool:
    return bool(getattr(model, "hf_device_map", None)) or input_device(model).type == "cpu" and any(
        p.device.type == "meta" for p in model.parameters())


def make_cache(model: PreTrainedModel, max_len: int) -> Any:
    """A ``StaticCache`` of ``max_len`` positions when the model supports one, else None (the model
    then makes its usual dynamic cache). Offloaded models keep the dynamic cache: their layers move."""
    if not getattr(model, "_can_compile_fullgraph", False) or _placed_by_accelerate(model):
        return None
    from transformers import StaticCache

    return StaticCache(config=model.config.get_text_config(decoder=True), max_cache_len=int(max_len))


def uses_cuda_graphs(model: PreTrainedModel, cache: Any) -> bool:
    """Compile the step only on CUDA, with a compileable (static) cache, as ``generate`` decides."""
    return (cache is not None and bool(getattr(cache, "is_compileable", False))
            and input_device(model).type == "cuda" and hasattr(model, "get_compiled_call"))


def step_call(model: PreTrainedModel, cache: Any) -> Callable[..., Any]:
    """The callable for one-token steps: the compiled one on CUDA (compiled once per model and
    shared with ``generate``; a new cache length records a new graph), else the plain forward."""
    if uses_cuda_graphs(model, cache):
        return model.get_compiled_call(None)
    return model.__call__
