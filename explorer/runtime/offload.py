"""Big checkpoints that fit no single device: accelerate's ``device_map="auto"`` with a memory budget.

A downloaded GPT-J 6B (24 GB in float32) or T5-11B does not fit one GPU, and often not the RAM
either. Instead of failing, :func:`load_offloaded` lets accelerate place whole layers: the GPUs
first (each up to its budget), then the CPU, then *disk*: layers that fit nowhere are written to
``offload_dir`` as memory-mapped files and streamed in for every forward (slow, but it runs).
The result says where every module went, so the page can tell the user what it will cost.

:func:`explorer.runtime.loading.load_model` comes here by itself when a real checkpoint is over the
single-device memory budget (:mod:`explorer.architecture.membudget`): :func:`load_if_over_budget` loads it within
that same budget, into a per-model folder under the explorer cache (:func:`offload_dir_for`), or
refuses it with the budget's message and why offloading cannot help (:func:`over_budget_refusal`).
This module never imports ``explorer.runtime.loading`` (no import cycle).

>>> budget(gpus_gib=[10], cpu_gib=4)
{0: '10GiB', 'cpu': '4GiB'}
"""

from __future__ import annotations

import errno
import re
import shutil
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from explorer.architecture import membudget
from explorer.architecture.build import BUILD_LOCK
from explorer.core import persist
from explorer.core.errors import ExplorerError

__all__ = ["AUTO_CLASSES", "MAX_OFFLOAD_PARAMS", "Offloaded", "auto_class", "budget", "input_device",
           "load_if_over_budget", "load_offloaded", "load_over_budget", "max_memory_for", "offload_dir_for",
           "over_budget_refusal"]

AUTO_CLASSES = {"base": "AutoModel", "masked-lm": "AutoModelForMaskedLM", "causal-lm": "AutoModelForCausalLM",
                "seq2seq": "AutoModelForSeq2SeqLM", "question-answering": "AutoModelForQuestionAnswering",
                "electra-discriminator": "ElectraForPreTraining"}
# Past this, streaming from disk stops being a slow demo and becomes no demo: a 40B model in float32
# reads ~160 GB per forward pass (minutes per token). T5-11B (11.3B) and GPT-J (6B) are well under it.
MAX_OFFLOAD_PARAMS = 20_000_000_000
_PLACES = {"cpu": "on the CPU", "disk": "streamed from disk (slow)"}  # anything else is a GPU index
# OSErrors meaning "the cache cannot take the offload folder" (full, read-only, no permission), not a bad checkpoint.
_NO_ROOM = {errno.ENOSPC, errno.EACCES, errno.EROFS, getattr(errno, "EDQUOT", errno.ENOSPC)}


@dataclass(frozen=True)
class Offloaded:
    """A model spread over devices and where its modules live."""

    model: torch.nn.Module
    device_map: dict[str, str]  # module name -> "cpu", "disk" or a GPU index as text
    offload_dir: str
    missing_keys: tuple[str, ...] = ()  # checkpoint keys the model wanted and did not find

    def placement(self) -> dict[str, int]:
        """How many top-level placements each device got, e.g. ``{"cpu": 3, "disk": 2}``."""
        return dict(Counter(self.device_map.values()))

    @property
    def device(self) -> str:
        """Where inputs go: "cuda" when any part is on a GPU (accelerate then runs the CPU and disk
        parts there too), else "cpu"."""
        return "cuda" if any(d not in _PLACES for d in self.device_map.values()) else "cpu"

    def summary(self) -> str:
        """Where the parts went, in words, GPUs first: "3 parts on the CPU, 5 streamed from disk (slow)"."""
        counts = sorted(self.placement().items(), key=lambda kv: (kv[0] in _PLACES, kv[0] == "disk", kv[0]))
        if len(counts) == 1:
            return f"all of it {_where(counts[0][0])}"
        return ", ".join(f"{n} part{'s' if n != 1 else ''} {_where(place)}" for place, n in counts)

    def to_dict(self) -> dict[str, object]:
        return {"device_map": dict(self.device_map), "placement": self.placement(), "offload_dir": self.offload_dir}


def _where(place: str) -> str:
    return _PLACES.get(place, f"on GPU {place}")


def input_device(model: torch.nn.Module) -> torch.device:
    """Where a model's input ids go: its device, or the CPU when accelerate streams even its first layer
    from disk (``model.device`` is then "meta"; accelerate's hooks move inputs to where each layer runs).

    >>> input_device(torch.nn.Linear(2, 2)).type
    'cpu'
    """
    device = next((p.device for p in model.parameters()), torch.device("cpu"))
    return torch.device("cpu") if device.type == "meta" else device


def budget(gpus_gib: list[float] | None = None, cpu_gib: float | None = None) -> dict[int | str, str]:
    """accelerate's ``max_memory``: GPU index -> size, then ``"cpu"``. Sizes in GiB as accelerate reads them."""
    out: dict[int | str, str] = {i: f"{g:g}GiB" for i, g in enumerate(gpus_gib or [])}
    if cpu_gib is not None:
        out["cpu"] = f"{cpu_gib:g}GiB"
    return out


def auto_class(task: str):
    """The transformers class that loads a checkpoint for ``task`` (every load, offloaded or not)."""
    import transformers

    if task not in AUTO_CLASSES:
        raise ExplorerError(f"Models load for the tasks {', '.join(AUTO_CLASSES)}, not {task!r}.")
    return getattr(transformers, AUTO_CLASSES[task])


def load_offloaded(path: str | Path, task: str, offload_dir: str | Path, *,
                   max_memory: Mapping[int | str, int | str] | None = None, dtype: torch.dtype | None = None,
                   attn_implementation: str | None = None) -> Offloaded:
    """Load a local checkpoint over GPUs, CPU and disk within ``max_memory`` (None: what is free).

    Only safetensors are offloaded this way (memory-mapped, never unpickled): a ``.bin``-only
    checkpoint is refused with a message, as everywhere in the app. transformers 5.23 streams the
    disk part straight from the checkpoint's own files; ``offload_dir`` only receives weights it
    has to convert first.
    """
    path = Path(path)
    if not path.is_dir() or not any(path.glob("*.safetensors")):
        raise ExplorerError(f"{path} has no .safetensors weights: offloaded loading needs a local safetensors "
                            "checkpoint (convert .bin files with transformers' save_pretrained first).")
    Path(offload_dir).mkdir(parents=True, exist_ok=True)
    extra = {"attn_implementation": attn_implementation} if attn_implementation else {}
    with BUILD_LOCK:  # from_pretrained swaps class-level init hooks while it builds: one build at a time
        model, info = auto_class(task).from_pretrained(
            str(path), device_map="auto", max_memory=max_memory, offload_folder=str(offload_dir),
            dtype=dtype or torch.float32, use_safetensors=True, trust_remote_code=False, local_files_only=True,
            output_loading_info=True, **extra)
    placed = {name: str(dev) for name, dev in (getattr(model, "hf_device_map", None) or _one_place(model)).items()}
    return Offloaded(model.eval(), placed, str(offload_dir), tuple(sorted(info.get("missing_keys", ()))))


def _one_place(model: torch.nn.Module) -> dict[str, str]:
    """The device map of a model that landed whole on one device: transformers 5.23 dispatches (and sets
    ``hf_device_map``) only when a map names two places or disk, so a model that fits one GPU has none and
    would be reported "on the CPU" (seen on an H200). Read where its weights are instead."""
    device = next((p.device for p in model.parameters()), torch.device("cpu"))
    return {"": "disk" if device.type == "meta" else "cpu" if device.type == "cpu" else str(device.index or 0)}


def offload_dir_for(path: str | Path, task: str, dtype: torch.dtype) -> Path:
    """``<explorer cache>/offload/<name>-<hash>``: one folder per checkpoint, task and dtype.

    Weights are written there by name, so two models (or one checkpoint as two tasks, whose weight
    names differ) sharing a folder would overwrite files the other streams from; the hash also
    covers the files' sizes and times, so a re-saved checkpoint gets a fresh folder.
    """
    path = Path(path).resolve()
    files = [(f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in sorted(path.glob("*.safetensors"))]
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", path.name).strip(".-")[:60] or "model"
    return persist.cache_dir() / "offload" / f"{safe}-{persist.fingerprint(str(path), task, str(dtype), files)[:12]}"


def max_memory_for(device: str) -> dict[int | str, int]:
    """accelerate's ``max_memory`` in bytes from the same budget single-device loads obey (free memory
    times a safety share, capped by ``EXPLORER_MEMORY_CAP_GB``), less its overhead allowance: the
    weights placed in memory plus the first forward's activations stay within that budget."""
    out: dict[int | str, int] = {}
    if device == "cuda" and torch.cuda.is_available():
        out[0] = int(membudget.memory_budget("cuda:0")[0] / membudget.OVERHEAD)
    out["cpu"] = int(membudget.memory_budget("cpu")[0] / membudget.OVERHEAD)
    return out


def over_budget_refusal(n_params: int, formats: tuple[str, ...]) -> str | None:
    """Why a checkpoint over the memory budget cannot be offloaded either (a sentence), or None."""
    if "safetensors" not in formats:
        return ("Offloading to disk needs safetensors weights (pickled .bin files are not streamed): convert them "
                "with transformers' save_pretrained first.")
    if n_params > MAX_OFFLOAD_PARAMS:
        return (f"Even streamed from disk, {n_params / 1e9:,.1f}B parameters is beyond this app's limit of "
                f"{MAX_OFFLOAD_PARAMS / 1e9:,.0f}B (every forward pass would read the whole model again).")
    return None


def load_over_budget(path: str | Path, task: str, *, device: str, dtype: torch.dtype,
                     attn_implementation: str | None = None) -> Offloaded:
    """:func:`load_offloaded` within the memory budget, into the checkpoint's folder under the cache.

    A full disk or an unwritable cache is an ExplorerError saying so (and the partial folder is
    removed), not the "corrupt checkpoint" message other OSErrors of a load get.
    """
    folder = offload_dir_for(path, task, dtype)
    try:
        return load_offloaded(path, task, folder, max_memory=max_memory_for(device), dtype=dtype,
                              attn_implementation=attn_implementation)
    except OSError as err:
        if err.errno not in _NO_ROOM:
            raise
        shutil.rmtree(folder, ignore_errors=True)
        raise ExplorerError(f"The model is too big for memory and cannot be offloaded to disk: the explorer cache "
                            f"could not take its offload folder ({err.strerror}). Free disk space, or point "
                            "EXPLORER_CACHE_DIR at a larger disk.") from err


def load_if_over_budget(path: str, formats: tuple[str, ...], task: str, n_params: int, *, what: str, device: str,
                        dtype: torch.dtype, attn: str | None = None) -> Offloaded | None:
    """None when ``n_params`` in ``dtype`` (2 bytes each in bfloat16/float16, 4 in float32) fit the budget
    of a load for ``device`` (:func:`explorer.architecture.membudget.load_budget`): the caller loads normally.

    Over it, a downloaded GPT-J 6B or T5-11B loads spread over GPU, CPU and disk rather than failing;
    when even that is impossible, the budget's usual message about ``what``, plus why, is raised.
    """
    allowed = membudget.load_budget(device)  # (bytes, why); a bad cap raises here
    if membudget.estimate_bytes(n_params, dtype) <= allowed[0]:
        return None
    refusal = over_budget_refusal(n_params, formats)
    if refusal is not None:
        try:
            membudget.require_fits(n_params, what, dtype, budget=allowed)
        except ExplorerError as err:
            raise ExplorerError(f"{err} {refusal}") from err
        return None  # not reached: require_fits raises for this very budget
    return load_over_budget(path, task, device=device, dtype=dtype, attn_implementation=attn)
