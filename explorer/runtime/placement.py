"""Where a model runs and in what precision: the user's choice, and the one rule for ``auto``.

A :class:`Placement` is what the sidebar, the CLI's ``--device``/``--dtype`` and the library's
``device=``/``dtype=`` keywords all carry: two names, checked once here. ``auto`` is one rule for the
whole app: CUDA, else Apple MPS, else the CPU; bfloat16 on CUDA (float16 on GPUs without
bfloat16), float16 on MPS, float32 on the CPU.

Refused with a message saying what to pick instead:

- a device this machine does not have (``cuda`` without a CUDA build or GPU, ``mps`` off a Mac);
- ``float16`` on the CPU: most CPU kernels have no fast float16 path (a forward is many times slower
  than float32) and some layers have none at all. ``bfloat16`` takes the same memory and runs there;
- ``bfloat16`` on a CUDA GPU older than Ampere (no bfloat16 arithmetic): use ``float16``.

Every result then says what actually ran (:func:`ran_on`: the device, its human name such as
"cuda:0 (NVIDIA H100 80GB HBM3)", and the dtype), since a GPU that runs out of memory falls back
to the CPU in float32.

>>> Placement.parse("CPU", "bf16")
Placement(device='cpu', dtype='bfloat16')
>>> Placement.parse("cpu", "float32").label
'cpu · float32'
>>> resolve_dtype("auto", "cpu")
torch.float32
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypedDict

import torch

from explorer.core.errors import ExplorerError

__all__ = [
    "AUTO", "DEVICES", "DTYPES", "Placement", "PlacementKwargs", "Ran", "RanOn", "auto_dtype", "available_devices",
    "best_device", "caption", "device_name", "dtype_name", "mps_available", "ran_on", "resolve_device",
    "resolve_dtype", "unavailable_reason",
]

DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("auto", "float32", "bfloat16", "float16")
# Spellings people type for the same dtype (the CLI and a shared link accept them; results use the full name).
_DTYPE_ALIASES = {"fp32": "float32", "f32": "float32", "bf16": "bfloat16", "fp16": "float16", "f16": "float16",
                  "half": "float16"}
_TORCH = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _cut(value: object) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _name(value: object, allowed: tuple[str, ...], what: str, aliases: dict[str, str] | None = None) -> str:
    """``value`` as one of ``allowed`` (None or "" = auto; case and spaces ignored), or an ExplorerError."""
    if value is None:
        return "auto"
    if isinstance(value, torch.dtype) and what == "dtype":
        value = dtype_name(value)
    text = str(value).strip().lower()
    text = (aliases or {}).get(text, text) or "auto"
    if text not in allowed:
        raise ExplorerError(f"Unknown {what} {_cut(value)!r}: use one of {', '.join(allowed)}.")
    return text


class PlacementKwargs(TypedDict):
    """``load_model``'s placement keywords, named so a type checker can match ``**kwargs()`` to parameters."""

    device: str
    dtype: str


class Ran(Protocol):
    """What :func:`ran_on` reads: a :class:`explorer.runtime.loading.LoadedModel` (which imports this module,
    so it is described here rather than imported)."""

    @property
    def device(self) -> str: ...

    @property
    def dtype(self) -> str: ...


class RanOn(TypedDict):
    """What ran, as the result fields every live result carries (``**ran_on(loaded)``)."""

    device: str
    device_name: str
    dtype: str


@dataclass(frozen=True)
class Placement:
    """The user's choice: a device name and a dtype name (each may be ``auto``). Validated on creation."""

    device: str = "auto"
    dtype: str = "auto"

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise ExplorerError(f"Unknown device {_cut(self.device)!r}: use one of {', '.join(DEVICES)}.")
        if self.dtype not in DTYPES:
            raise ExplorerError(f"Unknown dtype {_cut(self.dtype)!r}: use one of {', '.join(DTYPES)}.")

    @classmethod
    def parse(cls, device: object = None, dtype: object = None) -> Placement:
        """From typed text (CLI flags, URL query values): case-insensitive, ``bf16``/``fp16``/``fp32`` accepted."""
        return cls(_name(device, DEVICES, "device"), _name(dtype, DTYPES, "dtype", _DTYPE_ALIASES))

    @property
    def label(self) -> str:
        """The choice as the sidebar and captions write it, e.g. "cpu · float32"."""
        return caption(self.device, self.dtype)

    def resolve(self) -> tuple[str, torch.dtype]:
        """(concrete device, torch dtype) on this machine, or an ExplorerError saying what to pick."""
        device = resolve_device(self.device)
        return device, resolve_dtype(self.dtype, device)

    def kwargs(self) -> PlacementKwargs:
        """``load_model``'s keywords: ``load_model(ref, task, **placement.kwargs())``."""
        return {"device": self.device, "dtype": self.dtype}

    def to_dict(self) -> dict[str, str]:
        return {"device": self.device, "dtype": self.dtype}


AUTO = Placement()


def mps_available() -> bool:
    """Whether Apple's MPS backend can run here (the one probe of it: every "auto" choice and listing asks this)."""
    mps = getattr(torch.backends, "mps", None)
    return mps is not None and bool(mps.is_available())


def best_device() -> str:
    """"cuda" if present, else "mps" (Apple), else "cpu"."""
    if torch.cuda.is_available():
        return "cuda"
    return "mps" if mps_available() else "cpu"


def auto_dtype(device: str) -> torch.dtype:
    """Half precision on accelerators (bf16 where CUDA supports it), float32 on the CPU."""
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float16 if device == "mps" else torch.float32


def unavailable_reason(device: str) -> str | None:
    """Why ``device`` cannot run here (a sentence), or None when it can."""
    if device in ("auto", "cpu"):
        return None
    if device == "cuda":
        if not torch.cuda.is_available():
            built = torch.version.cuda is not None
            return ("no CUDA GPU is visible to this process" if built
                    else "this torch was built without CUDA (a CPU-only wheel)")
        return None
    if device == "mps":
        return None if mps_available() else "Apple MPS exists only on Macs with Apple silicon"
    return f"{_cut(device)!r} is not a device this app knows"


def available_devices() -> tuple[str, ...]:
    """The device names a user can pick here, ``auto`` first."""
    return tuple(d for d in DEVICES if unavailable_reason(d) is None)


def resolve_device(name: str | None) -> str:
    """A concrete device for a device name (``auto`` or None: :func:`best_device`), or why it cannot run here."""
    name = _name(name, DEVICES, "device")
    if name == "auto":
        return best_device()
    why = unavailable_reason(name)
    if why is not None:
        raise ExplorerError(f"{name} is not available here: {why}. Use device auto or cpu "
                            "(`python -m explorer doctor` shows what this machine has).")
    return name


def resolve_dtype(name: str | torch.dtype | None, device: str) -> torch.dtype:
    """The torch dtype for a dtype name on a concrete device (``auto`` or None: :func:`auto_dtype`)."""
    name = _name(name, DTYPES, "dtype", _DTYPE_ALIASES)
    if name == "auto":
        return auto_dtype(device)
    if name == "float16" and device == "cpu":
        raise ExplorerError("float16 on the CPU is refused: most CPU kernels have no fast float16 path (many times "
                            "slower than float32) and some have none. Use bfloat16 (same memory) or float32.")
    if name == "bfloat16" and device.startswith("cuda") and not torch.cuda.is_bf16_supported():
        raise ExplorerError("This GPU has no bfloat16 arithmetic (it predates Ampere): use float16 or float32.")
    return _TORCH[name]


def dtype_name(dtype: torch.dtype | str) -> str:
    """``torch.bfloat16`` -> "bfloat16"."""
    return str(dtype).removeprefix("torch.")


def device_name(device: str) -> str:
    """A device as people know it: "cpu", "cuda:0 (NVIDIA H100 80GB HBM3)", "mps (Apple GPU)".

    >>> device_name("cpu")
    'cpu'
    """
    if device.startswith("cuda") and torch.cuda.is_available():
        index = int(device.partition(":")[2] or torch.cuda.current_device())
        return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
    return "mps (Apple GPU)" if device == "mps" else device


def caption(device: str, dtype: str) -> str:
    """What ran, in one caption: "cpu · float32", "cuda:0 (NVIDIA H100 80GB HBM3) · bfloat16"."""
    return f"{device} · {dtype}"


def ran_on(loaded: Ran) -> RanOn:
    """``device``, ``device_name`` and ``dtype`` of a loaded model, as result fields: what actually ran
    (after any out-of-memory fallback), not what was asked."""
    device = str(getattr(loaded, "device", "cpu"))
    return {"device": device, "device_name": device_name(device), "dtype": str(getattr(loaded, "dtype", "float32"))}
