"""The one-token decoding step, as fast as ``generate(cache_implementation="static")`` runs it.

A ``DynamicCache`` grows by ``torch.cat`` every step (each step copies the whole cache) and has no
fixed shapes, so nothing can be captured. A ``StaticCache`` (transformers 5.23: ``StaticCache(config=,
max_cache_len=)``, allocated on the first update, written in place with ``index_copy_``, the position
kept in a tensor) has fixed shapes: on CUDA the one-token step can then be compiled with CUDA graphs,
exactly as ``generate`` does (``model.get_compiled_call``, transformers' ``torch.compile(mode=
"reduce-overhead", fullgraph=True)`` of ``model.__call__``, shared with ``generate``). Everywhere else
the step stays eager: the CPU never compiles (minutes of compilation for no gain on a page).

GPT-Neo is the one exception transformers 5.23 marks not compileable ("needs a hybrid cache") that
still takes a static cache, within its local window: its local layers cut their window mask out of a
fixed (max_positions x max_positions) buffer by the cache's *length*
(``GPTNeoSelfAttention._attn``: ``bias[:, :, key_len - q_len : key_len, :key_len]``). A static cache is
always ``max_cache_len`` long, so every query reads the mask row of the last slot: while prompt + new
tokens fit in ``window_size`` (256) that row masks nothing and the causal mask does the rest (the same
logits as the dynamic cache, to the bit); past the window the local layers would look at the wrong
tokens (``generate(cache_implementation="static")`` does so silently). So GPT-Neo runs static (compiled
on CUDA, as ``generate`` compiles it) inside its window and keeps the dynamic cache beyond it, with a
notice (:func:`dynamic_reason`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from explorer.runtime.offload import input_device

if TYPE_CHECKING:  # typing only: transformers loads with the first model
    from transformers import Cache, PreTrainedModel, StaticCache

__all__ = ["dynamic_reason", "make_cache", "step_call", "uses_cuda_graphs"]


def _placed_by_accelerate(model: torch.nn.Module) -> bool:
    return bool(getattr(model, "hf_device_map", None)) or input_device(model).type == "cpu" and any(
        p.device.type == "meta" for p in model.parameters())


def _within_local_window(model: PreTrainedModel, max_len: int) -> bool:
    """GPT-Neo with every position inside its local window: a static cache gives its exact logits."""
    config = model.config
    return getattr(config, "model_type", None) == "gpt_neo" and int(max_len) <= int(config.window_size)


def _takes_static(model: PreTrainedModel, max_len: int) -> bool:
    return (bool(getattr(model, "_can_compile_fullgraph", False)) or _within_local_window(model, max_len)) and \
        not _placed_by_accelerate(model)


def make_cache(model: PreTrainedModel, max_len: int) -> StaticCache | None:
    """A ``StaticCache`` of ``max_len`` positions when the model supports one, else None (the model
    then makes its usual dynamic cache). Offloaded models keep the dynamic cache: their layers move."""
    if not _takes_static(model, max_len):
        return None
    from transformers import StaticCache

    return StaticCache(config=model.config.get_text_config(decoder=True), max_cache_len=int(max_len))


def dynamic_reason(model: PreTrainedModel, max_len: int) -> str | None:
    """Why a decoding run of ``max_len`` positions (prompt + new tokens) keeps the dynamic cache and eager
    steps, in one sentence for a notice; None when it takes the static (and on CUDA compiled) path."""
    if _takes_static(model, max_len):
        return None
    if _placed_by_accelerate(model):
        return ("This model is spread over devices (offloaded): decoding keeps the dynamic KV cache and runs "
                "each step eagerly, as its layers move.")
    kind = getattr(model.config, "model_type", "this model")
    if kind == "gpt_neo":
        window = int(model.config.window_size)
        return (f"GPT-Neo keeps the dynamic KV cache past its {window:,}-token local window (prompt + new tokens: "
                f"{int(max_len):,}): its local layers cut their window mask by the cache's length, which a static "
                f"cache of fixed length breaks; each step runs eagerly. Within {window:,} tokens it runs on a static "
                "cache (compiled on a GPU).")
    return (f"{kind} has no static-cache (compileable) forward in transformers: decoding keeps the dynamic KV "
            "cache and runs each step eagerly.")


def uses_cuda_graphs(model: PreTrainedModel, cache: Cache | None) -> bool:
    """Compile the step only on CUDA, with a compileable (static) cache, as ``generate`` decides."""
    return (cache is not None and bool(getattr(cache, "is_compileable", False))
            and input_device(model).type == "cuda" and hasattr(model, "get_compiled_call"))


def step_call(model: PreTrainedModel, cache: Cache | None) -> Callable[..., Any]:
    """The callable for one-token steps: the compiled one on CUDA (compiled once per model and
    shared with ``generate``; a new cache length records a new graph), else the plain forward."""
    if uses_cuda_graphs(model, cache):
        return model.get_compiled_call(None)
    return model.__call__
