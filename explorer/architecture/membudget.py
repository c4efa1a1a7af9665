"""The budget every build and load passes first: field ranges, then bytes against free memory.

A config from a user (upload, URL, CLI) is checked field by field *before* transformers sees it,
in every nested sub-config (encoder/decoder/text configs): each layer count, width, head count,
vocabulary and position field must be a whole number in its range, and the message names the field
and the range. Only then is the model built on the meta device (no memory), its parameters counted,
and the bytes a real allocation would take compared with :func:`memory_budget` (free RAM, or free
GPU memory, times :data:`~explorer.core.memorypolicy.MODEL_MEMORY_SHARE`, capped by ``EXPLORER_MEMORY_CAP_GB``).
Over budget: an ``ExplorerError`` with the estimate and the cap, and nothing is allocated.

>>> check_config({"model_type": "t5", "num_decoder_layers": 1000000})
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: num_decoder_layers is 1,000,000; it must be a whole number from 1 to 512.
>>> check_config({"model_type": "bert", "encoder": {"hidden_size": "big"}})
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: encoder.hidden_size is 'big'; it must be a whole number from 1 to 131,072.
>>> estimate_bytes(1_000_000, "float32")
4400000
>>> nearest_divisor(768, 5)
4
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

from explorer.architecture.modeltypes import DECODER_LAYER_FIELDS, HEAD_FIELDS, LAYER_FIELDS
from explorer.core import settings
from explorer.core.errors import ExplorerError
from explorer.core.memorypolicy import MODEL_MEMORY_SHARE

if TYPE_CHECKING:  # typing only: torch loads with the first model
    import torch

__all__ = ["BYTES_PER_PARAM", "FIELD_RANGES", "check_config", "checkpoint_parameters", "dtype_label",
           "estimate_bytes", "load_budget", "memory_budget", "nearest_divisor", "require_fits"]

MAX_LAYERS = 512  # every layer is a Python object even on meta: 100k layers would hang the server
_LAYERS = (1, MAX_LAYERS)
_WIDTH = (1, 131_072)  # T5-11B's d_ff is 65,536
_HEADS = (1, 1_024)
# field -> (lowest, highest) whole number. Fields not listed are left to transformers.
FIELD_RANGES: dict[str, tuple[int, int]] = {
    # every spelling of a layer or head count (explorer.architecture.modeltypes), and ALBERT's groups
    **dict.fromkeys((*LAYER_FIELDS, *DECODER_LAYER_FIELDS, "num_hidden_groups", "inner_group_num"), _LAYERS),
    **dict.fromkeys(("hidden_size", "d_model", "n_embd", "dim", "embedding_size", "intermediate_size", "d_ff",
                     "n_inner", "encoder_ffn_dim", "decoder_ffn_dim", "hidden_dim", "d_kv", "head_dim",
                     "projection_dim"), _WIDTH),
    **dict.fromkeys((*HEAD_FIELDS, "decoder_attention_heads", "num_key_value_heads"), _HEADS),
    "vocab_size": (1, 2_000_000),  # Gemma 3: 262,144
    **dict.fromkeys(("max_position_embeddings", "n_positions", "n_ctx", "max_encoder_position_embeddings",
                     "max_decoder_position_embeddings"), (1, 1_048_576)),
    "type_vocab_size": (0, 1_024),
    "block_size": (1, 4_096),
    "num_random_blocks": (0, 64),
    "sliding_window": (1, 1_048_576),
    "relative_attention_num_buckets": (1, 4_096),
    "relative_attention_max_distance": (1, 1_048_576),
    "position_buckets": (-1, 4_096),
    "max_relative_positions": (-1, 1_048_576),
}
BYTES_PER_PARAM = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}
OVERHEAD = 1.1  # buffers, allocator slack and the first forward's activations on top of the weights
_NESTED = ("encoder", "decoder", "text_config", "vision_config", "generator", "discriminator")


def _check_value(path: str, value: object, bounds: tuple[int, int]) -> None:
    lo, hi = bounds
    ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
    if value is None or ok:
        return
    shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)[:40]
    raise ExplorerError(f"{path} is {shown}; it must be a whole number from {lo:,} to {hi:,}.")


def check_config(data: Mapping[str, object], prefix: str = "") -> None:
    """Every known size field of ``data`` and of its nested sub-configs is a whole number in range."""
    for name, value in data.items():
        path = f"{prefix}{name}"
        if name in _NESTED and isinstance(value, Mapping):
            check_config(value, prefix=f"{path}.")
        elif name == "attention_window" and isinstance(value, list):
            for i, w in enumerate(value[: MAX_LAYERS + 1]):
                _check_value(f"{path}[{i}]", w, (0, 1_048_576))
            if len(value) > MAX_LAYERS:
                raise ExplorerError(f"{path} lists {len(value):,} layers; at most {MAX_LAYERS} are built.")
        elif name in FIELD_RANGES:
            _check_value(path, value, FIELD_RANGES[name])


def nearest_divisor(n: int, k: int) -> int:
    """The divisor of ``n`` closest to ``k`` (ties: the smaller), searching outward from ``k``.

    ``k`` is a head count (at most 1,024 after :func:`check_config`), so this takes at most ``k``
    steps whatever ``n`` is; it never loops up to ``n`` (a 10^12 hidden size is one division per step).
    """
    n, k = int(n), max(1, int(k))
    for step in range(k):
        for d in (k - step, k + step):
            if 1 <= d <= n and n % d == 0:
                return d
    return 1


def dtype_label(dtype: str | torch.dtype) -> str:
    """``torch.bfloat16`` or ``"bfloat16"`` -> ``"bfloat16"`` (the keys of :data:`BYTES_PER_PARAM`)."""
    return str(dtype).removeprefix("torch.")


def estimate_bytes(n_params: int, dtype: str | torch.dtype = "float32") -> int:
    """Bytes a model of ``n_params`` takes when allocated in ``dtype`` (a name or a torch dtype; weights
    plus ``OVERHEAD``): bfloat16 and float16 take half of float32.

    >>> estimate_bytes(1_000_000, "bfloat16") * 2 == estimate_bytes(1_000_000)
    True
    """
    name = dtype_label(dtype)
    if name not in BYTES_PER_PARAM:
        raise ValueError(f"unknown dtype {name!r}; expected one of {tuple(BYTES_PER_PARAM)}")
    return int(n_params * BYTES_PER_PARAM[name] * OVERHEAD)


def _available_ram() -> int:
    try:
        return int(psutil.virtual_memory().available)
    except ImportError:  # psutil ships with streamlit; the bare library may run without it
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def _available_gpu(device: str) -> int:
    import torch

    if not device.startswith("cuda") or not torch.cuda.is_available():
        return 0
    free, _total = torch.cuda.mem_get_info(torch.device(device))
    return int(free)


def memory_budget(device: str = "cpu") -> tuple[int, str]:
    """Bytes a new model may take on ``device``, and a phrase saying where the figure comes from."""
    free = _available_gpu(device) if device.startswith("cuda") else _available_ram()
    budget, why = int(free * MODEL_MEMORY_SHARE), f"{MODEL_MEMORY_SHARE:.0%} of the {free / 1e9:.1f} GB free"
    cap = settings.MEMORY_CAP_GB.read()
    if cap is not None and int(cap * 1e9) < budget:
        budget, why = int(cap * 1e9), f"the cap EXPLORER_MEMORY_CAP_GB={cap:g}"
    return budget, why


def load_budget(device: str = "cpu") -> tuple[int, str]:
    """What a checkpoint loaded for ``device`` may take: a load reads the weights into CPU memory (in the
    chosen dtype) and then moves them, so a CUDA load must fit both the CPU's budget and the GPU's."""
    cpu = memory_budget("cpu")
    if not device.startswith("cuda"):
        return cpu
    gpu = memory_budget(device)  # 0 when no CUDA is visible: nothing known, the CPU's budget alone
    return (gpu[0], f"GPU: {gpu[1]}") if 0 < gpu[0] < cpu[0] else cpu


class TooBig(ExplorerError):
    """A model past the memory budget (an ExplorerError: its message says what to pick instead); a caller that can
    offer a smaller copy catches this one."""


def require_fits(n_params: int, what: str, dtype: str | torch.dtype = "float32", device: str = "cpu",
                 budget: tuple[int, str] | None = None) -> int:
    """Raise before allocating when ``what`` (``n_params`` in ``dtype``) exceeds the budget of ``device``
    (or ``budget``: (bytes, where the figure comes from) already read); return the bytes it needs."""
    need = estimate_bytes(n_params, dtype)
    allowed, why = budget if budget is not None else memory_budget(device)
    if need > allowed:
        raise TooBig(
            f"{what} needs about {need / 1e9:.1f} GB ({n_params / 1e6:,.0f}M parameters in {dtype_label(dtype)}); "
            f"this server allows {allowed / 1e9:.1f} GB ({why}). Pick a smaller model or fewer layers "
            "(EXPLORER_MEMORY_CAP_GB sets the server's cap).")
    return need


def checkpoint_parameters(directory: str | Path) -> int:
    """Parameters stored in a directory's safetensors files, read from their headers (no tensor data)."""
    from safetensors import safe_open

    total = 0
    for file in sorted(Path(directory).glob("*.safetensors")):
        with safe_open(str(file), framework="pt") as fh:
            for name in fh.keys():
                shape = fh.get_slice(name).get_shape()
                count = 1
                for dim in shape:
                    count *= int(dim)
                total += count
    return total
