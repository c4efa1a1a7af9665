"""The key/value cache measured on a real decoder: greedy generation with it and without it, and its tensors.

With the cache, the prompt runs once and every later step feeds only the newest token (transformers' own
``DynamicCache``, as ``generate`` makes it, windowed layers keeping their last ``window - 1`` positions); without
it, every step runs the whole text again (``use_cache=False``). Both are greedy (no random draw), read only the
last position's logits, and stop at the same end-of-sequence tokens: the tokens must be the same, only the time
differs. The cache's tensors are read after the run: each layer's keys and values, their shape and bytes, set
beside :func:`explorer.architecture.kvcache.plan` for the same context and dtype.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from explorer.architecture import kvcache
from explorer.core.errors import ExplorerError
from explorer.runtime import bundled, cancel
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on
from explorer.runtime.resolve import resolve
from explorer.tasks.generation.nexttoken import forward_last, takes_logits_to_keep
from explorer.tasks.generation.prompt import encode_prompt, prompt_limit
from explorer.tasks.generation.run import load_decoder
from explorer.tasks.generation.steps import eos_ids

if TYPE_CHECKING:  # typing only: no runtime import of the loader
    from explorer.runtime.loading import LoadedModel

__all__ = ["MAX_CONTEXT", "MAX_NEW_TOKENS", "CacheMeasurement", "CacheTensor", "cache_tensors", "measure",
           "measure_model", "prefill"]

MAX_NEW_TOKENS = 256  # without the cache every step reads the whole text again: a page must answer
MAX_CONTEXT = 8192  # a measured context: the uncached run reads it all again at every step


@dataclass(frozen=True)
class CacheTensor:
    """One layer's cached keys and values: ``shape`` of the keys (batch, kv heads, positions, head width)."""

    layer: int
    kind: str  # "sliding" (a windowed layer), "full" or "cross"
    shape: tuple[int, ...]
    bytes: int  # keys and values together
    window: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {"layer": self.layer, "kind": self.kind, "shape": list(self.shape), "bytes": self.bytes,
                "window": self.window}


@dataclass(frozen=True)
class CacheMeasurement:
    """Cached against uncached greedy generation of one prompt, and the cache it left."""

    model: str
    prompt_tokens: int
    context: int  # positions the cache has seen (prompt + new tokens - 1: the last token was never fed)
    tensors: tuple[CacheTensor, ...]
    calculated: kvcache.CachePlan
    cached_ids: tuple[int, ...]
    uncached_ids: tuple[int, ...]
    cached_text: str
    uncached_text: str
    cached_seconds: float
    uncached_seconds: float
    device: str = "cpu"
    device_name: str = "cpu"
    dtype: str = "float32"

    @property
    def measured_bytes(self) -> int:
        return sum(t.bytes for t in self.tensors)

    @property
    def tokens_equal(self) -> bool:
        return self.cached_ids == self.uncached_ids

    @property
    def cached_tokens_per_s(self) -> float:
        return len(self.cached_ids) / self.cached_seconds if self.cached_seconds > 0 else 0.0

    @property
    def uncached_tokens_per_s(self) -> float:
        return len(self.uncached_ids) / self.uncached_seconds if self.uncached_seconds > 0 else 0.0

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "prompt_tokens": self.prompt_tokens, "context": self.context,
                "measured_bytes": self.measured_bytes, "calculated_bytes": self.calculated.bytes,
                "tensors": [t.to_dict() for t in self.tensors], "tokens_equal": self.tokens_equal,
                "new_tokens": len(self.cached_ids), "cached_text": self.cached_text,
                "uncached_text": self.uncached_text, "cached_tokens_per_s": self.cached_tokens_per_s,
                "uncached_tokens_per_s": self.uncached_tokens_per_s, "device": self.device,
                "device_name": self.device_name, "dtype": self.dtype}


def _kv_bytes(keys: torch.Tensor, values: torch.Tensor) -> int:
    return int(keys.numel() * keys.element_size() + values.numel() * values.element_size())


def _layers(cache: object, kind: str | None = None) -> list[CacheTensor]:
    out = []
    for i, layer in enumerate(getattr(cache, "layers", ())):
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        if not isinstance(keys, torch.Tensor) or not isinstance(values, torch.Tensor):
            continue  # a layer that cached nothing (never reached)
        sliding = bool(getattr(layer, "is_sliding", False))
        window = getattr(layer, "sliding_window", None)
        out.append(CacheTensor(i, kind or ("sliding" if sliding else "full"), tuple(keys.shape),
                               _kv_bytes(keys, values), int(window) if isinstance(window, int) else None))
    return out


def cache_tensors(cache: object) -> tuple[CacheTensor, ...]:
    """Every layer's cached keys and values (an encoder-decoder's self- and cross-attention caches both)."""
    own = getattr(cache, "self_attention_cache", None)  # an EncoderDecoderCache
    if own is not None:
        return (*_layers(own), *_layers(getattr(cache, "cross_attention_cache", None), "cross"))
    return tuple(_layers(cache))


def _dtype(loaded: LoadedModel) -> str:
    name = str(loaded.dtype)
    return name if name in kvcache.DTYPE_BYTES else "float32"


def prefill(loaded: LoadedModel, ids: list[int]) -> tuple[tuple[CacheTensor, ...], kvcache.CachePlan]:
    """The cache after the model reads ``ids`` once, and the calculator's plan for as many tokens."""
    model = loaded.model
    with torch.inference_mode():
        _, cache = forward_last(model, torch.tensor([ids], dtype=torch.long))
    return cache_tensors(cache), kvcache.plan(model.config, len(ids), _dtype(loaded), loaded.key)


def _cached(model: torch.nn.Module, ids: list[int], new: int, eos: set[int]) -> tuple[list[int], object, float]:
    out: list[int] = []
    began, cache, pending = time.perf_counter(), None, torch.tensor([ids], dtype=torch.long)
    with torch.inference_mode():
        while len(out) < new:
            cancel.check()
            logits, cache = forward_last(model, pending, cache, on_device=True)
            out.append(int(torch.argmax(logits, dim=-1)))
            if out[-1] in eos:
                break
            pending = torch.tensor([[out[-1]]], dtype=torch.long)
    return out, cache, time.perf_counter() - began


def _uncached(model: torch.nn.Module, ids: list[int], new: int, eos: set[int]) -> tuple[list[int], float]:
    out: list[int] = []
    began, device = time.perf_counter(), input_device(model)
    keep: dict[str, object] = {"logits_to_keep": 1} if takes_logits_to_keep(model) else {}
    with torch.inference_mode():
        while len(out) < new:
            cancel.check()
            text = torch.tensor([ids + out], dtype=torch.long, device=device)
            logits = model(input_ids=text, use_cache=False, **keep).logits[:, -1, :]
            out.append(int(torch.argmax(logits, dim=-1)))
            if out[-1] in eos:
                break
    return out, time.perf_counter() - began


def _prompt_ids(loaded: LoadedModel, text: str, new_tokens: int, context: int | None) -> list[int]:
    """The text's tokens; with ``context``, its tokens after the first repeated until the prompt and the new tokens
    fill ``context`` positions (the last new token is never fed: ``context - new_tokens + 1`` prompt tokens)."""
    cap = prompt_limit(loaded.model)
    ids = list(encode_prompt(loaded.tokenizer, text, cap.value, cap.reason).ids)
    if context is None:
        return ids
    if isinstance(context, bool) or not isinstance(context, int) or not 1 <= context <= min(cap.value, MAX_CONTEXT):
        raise ExplorerError(f"A measured context must be a whole number of tokens from 1 to "
                            f"{min(cap.value, MAX_CONTEXT):,} (got {context!r}): without the cache every step "
                            f"reads it all again. {cap.reason}".strip())
    body, wanted = ids[1:] or ids, context - min(new_tokens, context) + 1
    return ids[:1] + [body[i % len(body)] for i in range(wanted - 1)]


def _checked_new(new_tokens: int) -> int:
    if isinstance(new_tokens, bool) or not isinstance(new_tokens, int) or not 1 <= new_tokens <= MAX_NEW_TOKENS:
        raise ExplorerError(f"New tokens must be a whole number from 1 to {MAX_NEW_TOKENS} (got {new_tokens!r}): "
                            "without the cache every step reads the whole text again.")
    return new_tokens


def measure(loaded: LoadedModel, text: str, new_tokens: int = 32, context: int | None = None, *,
            stop_at_eos: bool = True) -> CacheMeasurement:
    """Greedy generation of ``new_tokens`` after ``text`` with the cache and without it (cached first: it warms
    the model up, so the uncached run is not charged for it), and the cache the first left; with ``context``, the
    prompt is the text repeated so that ``context`` positions are cached at the end (fewer if it stops early);
    ``stop_at_eos=False`` runs every step (a benchmark's fixed length)."""
    new_tokens = _checked_new(new_tokens)
    model, tokenizer = loaded.model, loaded.tokenizer
    ids = _prompt_ids(loaded, text, new_tokens, context)
    new_tokens = min(new_tokens, context or new_tokens)
    eos = set(eos_ids(model)) if stop_at_eos else set()
    cached, cache, cached_s = _cached(model, ids, new_tokens, eos)
    uncached, uncached_s = _uncached(model, ids, new_tokens, eos)
    seen = len(ids) + len(cached) - 1
    return CacheMeasurement(
        loaded.key, len(ids), seen, cache_tensors(cache), kvcache.plan(model.config, max(seen, 1), _dtype(loaded),
                                                                       loaded.key),
        tuple(cached), tuple(uncached), tokenizer.decode(cached, skip_special_tokens=True),
        tokenizer.decode(uncached, skip_special_tokens=True), cached_s, uncached_s, **ran_on(loaded))


def measure_model(spec: str, text: str, new_tokens: int = 32, context: int | None = None, *,
                  device: str | None = None, dtype: str | None = None,
                  models_dir: str | None = None) -> CacheMeasurement:
    """:func:`measure` on the decoder ``spec`` names (its weights must be here: the bundled Gemma is converted
    first)."""
    _checked_new(new_tokens)
    ref = resolve(spec, models_dir)
    if not ref.ready and ref.spec != bundled.KEY:  # the bundled one is converted on load
        raise ExplorerError(f"Measuring the cache needs {spec!r}'s weights: {ref.reason}")
    return measure(load_decoder(ref, purpose="the key/value cache's measurement", device=device, dtype=dtype),
                   text, new_tokens, context)
