"""Every size cap that depends on the device, computed from it and its free memory, each with its reason.

(Caps on the length of a typed text, the same on every device, are in :mod:`explorer.core.limits`.)

The pure functions take the device facts as an argument (:class:`DeviceFacts`), so the GPU rules are
tested on a CPU machine; :func:`device_facts` is the one place that asks torch. A :class:`Limit` is
the value and a sentence saying why ("cuda: 61.0 GiB free -> 4,096 tokens"); notices that cut
something quote that reason.

CPU limits are the ones set for a 2-core CPU: 512 attention tokens
(up to 1,024 for models with few heads), 1,024 prompt tokens and 200 new tokens for decoding, 8 models
a page. On a GPU: attention up to at least 4,096 tokens (Longformer and BigBird then run their real
sparse kernels; Gemma 3's 512-token local window shows), prompts up to the model's context where the
KV cache fits, up to 1,024 new tokens, more models a page.

>>> cpu = DeviceFacts("cpu", "cpu", 8 * GIB, 2)
>>> attention_tokens(cpu, 12, 12).value, attention_tokens(cpu, 18, 4).value
(512, 724)
>>> gpu = DeviceFacts("cuda", "NVIDIA H100", 61 * GIB, 16)
>>> limit = attention_tokens(gpu, 12, 12); limit.value >= 4096, limit.reason.startswith("cuda: 61.0 GiB free")
(True, True)
>>> prompt_tokens(cpu, 32_768, 1_000).value, prompt_tokens(gpu, 32_768, 9_216).value
(1024, 32768)
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.architecture import kvcache
from explorer.architecture.membudget import memory_budget
from explorer.core.memorypolicy import MEMORY_PLAN_SHARE

if TYPE_CHECKING:  # typing only: torch loads when a device is read
    import torch

__all__ = [
    "BASE_TOKENS", "CPU_NEW_TOKENS", "CPU_PAGE_MODELS", "CPU_PROMPT_TOKENS", "GIB", "MAP_BYTES", "MAX_TOKENS",
    "DeviceFacts", "Limit", "attention_ceiling", "attention_tokens", "device_facts", "kv_bytes_per_token",
    "GPU_NEW_TOKENS", "model_facts", "new_tokens", "page_models", "prompt_tokens", "viewer_limit",
]

GIB = 1 << 30
# The device caps below plan on MEMORY_PLAN_SHARE of what is free (explorer.core.memorypolicy: half).

# ---- CPU: the caps set for a 2-core CPU (unchanged) -------------------------------------------------
BASE_TOKENS = 512  # every model may show this many: 12 layers x 12 heads x 512^2 float32 is already 150 MB
MAP_BYTES = 12 * 12 * 512 * 512 * 4  # models with fewer maps may show longer texts within the same memory...
MAX_TOKENS = 1024  # ...up to this: Gemma 3's local layers (a 512-token window) need texts longer than 512
CPU_PROMPT_TOKENS = 1024  # one forward over 1,024 tokens already takes seconds on a 2-core CPU
CPU_NEW_TOKENS = 200  # about 25 s of CPU decoding for Gemma 3 270M: a page must answer
CPU_PAGE_MODELS = 8  # fill-mask columns one request may load: 20 models from a shared link peaked at 10 GB

# ---- GPU ---------------------------------------------------------------------------------------------
GPU_MIN_ATTENTION = 4096  # past 704 tokens Longformer/BigBird run their sparse kernels; Gemma's 512 window shows
GPU_MAX_ATTENTION = 16_384  # the block maps stay small, but one layer's H x T x T on the device grows as T^2
ATTENTION_COPIES = 3  # scores, probabilities and the dtype cast of one layer live together in eager attention
GPU_MAX_PROMPT = 131_072  # no model here reads more
GPU_NEW_TOKENS = 1024  # ~20 ms a token eager on a GPU: about 20 s, like 200 tokens on the CPU
GPU_MODEL_BYTES = 2 * GIB  # one fill-mask column (a large encoder in float32 and its activations)
GPU_MAX_PAGE_MODELS = 24  # beyond this the page's charts stop being readable anyway
MAX_BEAMS = 8  # the decoding lab's widest beam: each beam keeps its own KV cache


@dataclass(frozen=True)
class DeviceFacts:
    """What the caps depend on: the device kind ("cpu", "cuda", "mps"), its name, the bytes free
    where the tensors live (GPU: ``torch.cuda.mem_get_info``; CPU:
    :func:`explorer.architecture.membudget.memory_budget`) and the CPU cores."""

    kind: str
    name: str
    free_bytes: int
    cores: int

    @property
    def accelerated(self) -> bool:
        return self.kind in ("cuda", "mps")

    def describe(self) -> str:
        return f"{self.kind}: {self.free_bytes / GIB:.1f} GiB free"


@dataclass(frozen=True)
class Limit:
    """A cap and the sentence that explains it (quoted by every notice that cuts something)."""

    value: int
    reason: str


def device_facts(device: str | torch.device = "auto") -> DeviceFacts:
    """The facts of ``device`` ("auto": :func:`explorer.runtime.placement.best_device`; a ``torch.device`` works
    too)."""
    import torch

    from explorer.runtime.placement import best_device  # imports torch at its top

    name = str(device)
    if name == "auto":
        name = best_device()
    cores = os.cpu_count() or 1
    if name.startswith("cuda") and torch.cuda.is_available():
        dev = torch.device(name)
        free, _total = torch.cuda.mem_get_info(dev)
        return DeviceFacts("cuda", torch.cuda.get_device_name(dev), int(free), cores)
    if name.startswith("meta"):  # a model streamed wholly from disk computes on the CPU
        name = "cpu"

    free, _why = memory_budget("cpu")
    return DeviceFacts(name.split(":")[0], name, int(free), cores)


def model_facts(model: torch.nn.Module) -> DeviceFacts:
    """The facts of the device a loaded model computes on (its inputs' device: the CPU for a model that
    accelerate streams from disk)."""
    from explorer.runtime.offload import input_device

    return device_facts(input_device(model))


def _cpu_reason(facts: DeviceFacts, value: int, what: str) -> str:
    return f"{facts.kind}: kept at {value:,} {what} for a {facts.cores}-core CPU"


def viewer_limit(n_maps: int | None) -> int:
    """CPU rule: tokens whose ``n_maps`` float32 maps (layers x heads, all stacks) fit :data:`MAP_BYTES`,
    never fewer than 512 nor more than 1,024.

    >>> viewer_limit(12 * 12), viewer_limit(18 * 4), viewer_limit(24 * 16), viewer_limit(None)
    (512, 724, 512, 512)
    """
    if not n_maps or n_maps <= 0:
        return BASE_TOKENS
    return max(BASE_TOKENS, min(MAX_TOKENS, int((MAP_BYTES / (4 * n_maps)) ** 0.5)))


def attention_tokens(facts: DeviceFacts, layers: int | None, heads: int | None,
                     encoder_decoder: bool = False) -> Limit:
    """Tokens the attention viewer takes for a model of ``layers`` x ``heads`` on this device.

    CPU: every map is kept in full (:func:`viewer_limit`). GPU: maps are reduced layer by layer as
    they come (block averages, :mod:`explorer.tasks.attention.blocks`), so what bounds the length is one
    layer's ``ATTENTION_COPIES x H x T x T`` float32 on the device: the longest T within
    :data:`MEMORY_PLAN_SHARE` of the free memory, at least 4,096 when that fits, at most 16,384. Encoder-decoders
    keep the CPU rule everywhere (their decoder and cross views need the full maps).
    """
    full = viewer_limit(layers * heads * (3 if encoder_decoder else 1) if layers and heads else None)
    if not facts.accelerated:
        return Limit(full, _cpu_reason(facts, full, "tokens") + f" (every map kept in full: "
                     f"{BASE_TOKENS:,} tokens, up to {MAX_TOKENS:,} for models with few heads)")
    if encoder_decoder:
        return Limit(full, f"{facts.kind}: {full:,} tokens (encoder-decoders keep every map in full "
                           "for their decoder and cross-attention views)")
    per_token2 = ATTENTION_COPIES * max(1, heads or 12) * 4  # bytes per T^2 of one layer
    fits = int(math.sqrt(MEMORY_PLAN_SHARE * facts.free_bytes / per_token2))
    value = max(full, min(GPU_MAX_ATTENTION, fits))
    if fits >= GPU_MIN_ATTENTION:
        return Limit(value, f"{facts.describe()} -> {value:,} tokens (one layer's {heads or 12} heads of "
                            f"T x T float32 at a time, {MEMORY_PLAN_SHARE:.0%} of free memory, at most "
                            f"{GPU_MAX_ATTENTION:,})")
    return Limit(value, f"{facts.describe()} -> {value:,} tokens: too little free memory for {GPU_MIN_ATTENTION:,} "
                        f"(one layer's {heads or 12} heads of T x T float32 must fit in {MEMORY_PLAN_SHARE:.0%} of it)")


def attention_ceiling(facts: DeviceFacts) -> int:
    """The most any model may take on this device (the page's "Max tokens" field tops out here)."""
    return attention_tokens(facts, 1, 1).value if facts.accelerated else MAX_TOKENS


def kv_bytes_per_token(config: object, dtype_bytes: int = 4) -> int | None:
    """Bytes of KV cache one token takes: 2 (keys, values) x layers x KV heads x head width x dtype
    (:func:`explorer.architecture.kvcache.bytes_per_token`, the one home of the rule)."""
    return kvcache.bytes_per_token(config, dtype_bytes)


def prompt_tokens(facts: DeviceFacts, context: int | None, kv_bytes: int | None) -> Limit:
    """Prompt tokens a decoder reads here. CPU: 1,024. GPU: the model's ``context`` as far as
    :data:`MAX_BEAMS` KV caches of ``kv_bytes`` per token fit in :data:`MEMORY_PLAN_SHARE` of the free memory."""
    if not facts.accelerated:
        value = min(CPU_PROMPT_TOKENS, context) if context else CPU_PROMPT_TOKENS
        return Limit(value, _cpu_reason(facts, CPU_PROMPT_TOKENS, "prompt tokens"))
    ceiling = min(context, GPU_MAX_PROMPT) if context else GPU_MAX_PROMPT
    fits = int(MEMORY_PLAN_SHARE * facts.free_bytes / (MAX_BEAMS * kv_bytes)) if kv_bytes else ceiling
    value = max(CPU_PROMPT_TOKENS if not context else min(CPU_PROMPT_TOKENS, context), min(ceiling, fits))
    if value >= ceiling:
        return Limit(value, f"{facts.describe()} -> {value:,} prompt tokens (the model's whole context)")
    return Limit(value, f"{facts.describe()} -> {value:,} prompt tokens ({MAX_BEAMS} beams' KV caches of "
                        f"{(kv_bytes or 0) / 1024:,.0f} KiB a token within {MEMORY_PLAN_SHARE:.0%} of free memory)")


def new_tokens(facts: DeviceFacts) -> Limit:
    """Tokens one decoding run may add: 200 on a CPU (a page must answer), 1,024 on a GPU."""
    if not facts.accelerated:
        return Limit(CPU_NEW_TOKENS, _cpu_reason(facts, CPU_NEW_TOKENS, "new tokens"))
    return Limit(GPU_NEW_TOKENS, f"{facts.describe()} -> {GPU_NEW_TOKENS:,} new tokens (about 20 ms a token)")


def page_models(facts: DeviceFacts) -> Limit:
    """Models one page request may load: 8 on a CPU; on a GPU one per 2 GiB within :data:`MEMORY_PLAN_SHARE` of
    the free memory, at least 8, at most 24."""
    if not facts.accelerated:
        return Limit(CPU_PAGE_MODELS, _cpu_reason(facts, CPU_PAGE_MODELS, "models a page"))
    fits = int(MEMORY_PLAN_SHARE * facts.free_bytes // GPU_MODEL_BYTES)
    value = max(CPU_PAGE_MODELS, min(GPU_MAX_PAGE_MODELS, fits))
    return Limit(value, f"{facts.describe()} -> {value} models a page (2 GiB each within {MEMORY_PLAN_SHARE:.0%} of "
                        f"free memory, at most {GPU_MAX_PAGE_MODELS})")
