"""Load a model + tokenizer once per process: device choice, safety checks, a shared LRU cache.

``load_model(ref, task)`` loads a model resolved once (:class:`explorer.runtime.resolve.ModelRef`: where its
weights are, found without the network), refuses pickled weights unless ``allow_pickle=True``, never runs remote
code, checks the architecture against the catalog, and returns a :class:`LoadedModel` in
eval mode on the best device. A real checkpoint over the single-device memory budget is
spread over GPU, CPU and disk by :mod:`explorer.runtime.offload` instead (with a notice saying where its
layers went); only when that is impossible too is it refused. Models are kept in
:mod:`explorer.runtime.modelcache` (process-wide, shared by all Streamlit sessions, bounded by memory,
least recently used out), and a given model is loaded once even when sessions ask together.
Cached models are shared: callers must never move or mutate them. The tokenizer comes from
:mod:`explorer.runtime.tokenizers` (the checkpoint's own, or the one shipped for its variant).

>>> best_device() in ("cuda", "mps", "cpu"), device_dtype("cpu")
(True, torch.float32)

Device and dtype are the caller's choice (``device=``/``dtype=``: ``auto`` or a name, see
:mod:`explorer.runtime.placement`, the one home of the rule); both are part of the cache key.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from explorer.architecture import build, catalog, custom_models, membudget
from explorer.architecture.build import BUILD_LOCK
from explorer.core.errors import ExplorerError, shorten
from explorer.core.handles import Tokenizer
from explorer.core.notices import Notice, texts
from explorer.runtime import (
    bundled,
    cancel,
    fence,
    modelcache,
    offload,
    placement,
    tokenizers,
    weights,
)
from explorer.runtime.resolve import ModelRef

if TYPE_CHECKING:  # typing only: transformers loads when a model does
    from transformers import PreTrainedModel

__all__ = ["MODEL_BUILD_LOCK", "TASKS", "LoadedModel", "best_device", "device_dtype", "load_model"]

TASKS = ("base", "masked-lm", "causal-lm", "seq2seq", "question-answering", "electra-discriminator")
RANDOM_SEED = 0  # random-weight mode is reproducible: same variant -> same untrained weights
# Missing checkpoint keys that are harmless: buffers rebuilt at init, and BERT's pooler, which
# MLM checkpoints often drop and which no demo uses (hidden states do not depend on it).
HARMLESS_MISSING = ("position_ids", "token_type_ids", "masked_bias", ".attn.bias")
HARMLESS_PARTS = ("pooler.",)
# What from_pretrained's RuntimeError says when checkpoint shapes contradict the config (other RuntimeErrors are bugs).
SHAPE_MISMATCH = ("ignore_mismatched_sizes", "size mismatch")


@dataclass(frozen=True)
class LoadedModel:
    """A ready model (eval mode, on ``device``) and its tokenizer. Shared: never mutate."""

    key: str
    name: str
    model: PreTrainedModel
    tokenizer: Tokenizer
    device: str
    dtype: str
    path: str | None
    source: str | None
    untrained: bool  # random-weight mode: every result must be labelled untrained
    load_seconds: float
    notices: tuple[Notice, ...] = ()  # e.g. "fallback": CUDA ran out of memory, the model runs on the CPU

    @property
    def device_name(self) -> str:
        """The device as people know it, e.g. "cuda:0 (NVIDIA H100 80GB HBM3)" or "cpu"."""
        return placement.device_name(self.device)

    def to_dict(self) -> dict[str, object]:
        """Everything but the model and tokenizer objects (JSON-able)."""
        return {"key": self.key, "name": self.name, "device": self.device, "device_name": self.device_name,
                "dtype": self.dtype,
                "path": fence.public(self.path), "source": self.source, "untrained": self.untrained,
                "load_seconds": round(self.load_seconds, 3), "notice": " ".join(texts(self.notices)),
                "parameters": sum(p.numel() for p in self.model.parameters())}


def best_device() -> str:
    """"cuda" if present, else "mps" (Apple), else "cpu" (:func:`explorer.runtime.placement.best_device`)."""
    return placement.best_device()


def device_dtype(device: str) -> torch.dtype:
    """The dtype ``auto`` picks on ``device`` (:func:`explorer.runtime.placement.auto_dtype`)."""
    return placement.auto_dtype(device)


def _auto_class(task: str):
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Loading weights" bars would flood the CLI and server logs
    return offload.auto_class(task)  # one table of task -> class, offloaded loads included


def _catalog_variant(key: str):
    try:
        return catalog.get_variant(key)
    except ExplorerError:
        return None


def _converted(key: str, models_dir: str | None) -> weights.WeightsStatus:
    """The bundled GGUF decoder's weights once converted (once, into the models cache), or an ExplorerError."""
    bundled.ensure_converted(models_dir)
    status = weights.locate(key, models_dir)  # where the conversion put them
    if status.status != "ready" or status.path is None:
        raise ExplorerError(status.message)
    mismatch = weights.architecture_error(key, Path(status.path))
    if mismatch:
        raise ExplorerError(mismatch)
    return status


def _ready(ref: ModelRef) -> weights.WeightsStatus:
    """The weights a resolved model loads from; the bundled GGUF decoder is converted on its first load."""
    if ref.status is None or not ref.ready:
        raise ExplorerError(ref.reason)
    if ref.status.formats == ("gguf",):
        return _converted(ref.spec, ref.models_dir)
    return ref.status


def _first_line(err: BaseException, path: str | None = None) -> str:
    """The first line of a library error, cut, with ``path`` shown as :func:`explorer.runtime.fence.public` shows it."""
    line = (str(err).strip().splitlines() or [type(err).__name__])[0][:240]
    return line.replace(path, fence.public(path)) if path else line


def _check_missing(path: str, task: str, info: Mapping[str, Iterable[str]]) -> None:
    """Refuse a checkpoint whose task head would be silently random (e.g. MiniLM as masked-lm)."""
    missing = [k for k in info.get("missing_keys", ())
               if not k.endswith(HARMLESS_MISSING) and not any(p in k for p in HARMLESS_PARTS)]
    if missing:
        shown = ", ".join(sorted(missing)[:3]) + (" ..." if len(missing) > 3 else "")
        raise ExplorerError(f"{fence.public(path)} has no trained weights for the {task} head (missing {shown}): "
                            "this checkpoint was saved without it. Pick a checkpoint that has that head.")


def _pretrained_kwargs(status: weights.WeightsStatus, attn: str | None, allow_pickle: bool,
                       dtype: torch.dtype = torch.float32) -> dict[str, object]:
    """from_pretrained's arguments for a ready directory: safetensors, or pickles only when opted in."""
    use_safetensors = "safetensors" in status.formats
    if not use_safetensors and not allow_pickle:
        raise ExplorerError(f"{fence.public(status.path)} only has pickled .bin weights, which can run code when "
                            "loaded: convert them to safetensors, or opt in with allow_pickle (only for files you "
                            "trust).")
    if not use_safetensors:  # stacklevel 4: reported in load_model, past _from_pretrained and _load_uncached
        warnings.warn(f"Loading pickled weights from {status.path}: only do this for files you trust.",
                      UserWarning, stacklevel=4)
    # Read straight into the chosen dtype (transformers 5 would otherwise keep the checkpoint's, and a
    # bf16 load never holds a float32 copy); float16 never reaches the CPU (explorer.runtime.placement refuses it).
    kwargs: dict[str, object] = {"local_files_only": True, "trust_remote_code": False, "dtype": dtype,
                              "use_safetensors": use_safetensors, "output_loading_info": True}
    if attn:
        kwargs["attn_implementation"] = attn
    return kwargs


def _from_pretrained(status: weights.WeightsStatus, task: str, attn: str | None, allow_pickle: bool,
                     device: str = "cpu", dtype: torch.dtype = torch.float32,
                     ) -> tuple[torch.nn.Module, offload.Offloaded | None]:
    """(model in eval mode, its offload placement or None): on the CPU, or over the memory budget
    spread by accelerate over GPU, CPU and disk."""
    from safetensors import SafetensorError

    assert status.path is not None  # _ready passes only ready weights, which have their folder
    kwargs = _pretrained_kwargs(status, attn, allow_pickle, dtype)
    # Before any allocation: parameters from the safetensors headers (no data read), else the .bin size
    # assuming half precision on disk; the budget counts the bytes of the chosen dtype (2 a parameter in
    # bfloat16/float16: a bf16 GPU load is admitted where it fits).
    try:  # a corrupt header fails here already: the same message as a corrupt file below
        stored = membudget.checkpoint_parameters(status.path) or status.disk_bytes // 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # Over the budget: spread over GPU, CPU and disk in the chosen dtype, or refused.
            spread = offload.load_if_over_budget(
                status.path, status.formats, task, stored, what=f"The checkpoint in {fence.public(status.path)}",
                device=device, dtype=dtype, attn=attn)
            if spread is not None:
                model, info = spread.model, {"missing_keys": spread.missing_keys}
            else:
                model, info = _auto_class(task).from_pretrained(status.path, **kwargs)
    except ValueError as err:  # messages show the path as fence.public does: never a server's absolute path
        shown = fence.public(status.path)
        if "Unrecognized configuration class" in str(err) or "does not support" in str(err):
            raise ExplorerError(f"{shown} cannot be loaded for {task!r}: {_first_line(err, status.path)}") from err
        raise ExplorerError(f"Cannot load {shown}: {_first_line(err, status.path)}") from err
    except (OSError, SafetensorError) as err:  # corrupt or truncated file
        raise ExplorerError(f"Cannot load the weights in {fence.public(status.path)} ({type(err).__name__}: "
                            f"{_first_line(err, status.path)}). "
                            "The file may be corrupt or truncated: delete it and download or save it again.") from err
    except RuntimeError as err:  # only weights whose shapes contradict config.json are the user's problem
        if not any(m in str(err) for m in SHAPE_MISMATCH):
            raise
        raise ExplorerError(f"The weights in {fence.public(status.path)} do not have the shapes its config.json "
                            "describes: the config was edited or belongs to another checkpoint. "
                            "Save the model again.") from err
    _check_missing(status.path, task, info)
    return model.eval(), spread


def _require_random_fits(key: str, build: Any, config: Any, kwargs: Mapping[str, object]) -> None:
    """Count the random model on the meta device first: t5-11b in float32 (~48 GB) is refused with a
    message instead of growing the server until the kernel kills it."""
    try:
        with BUILD_LOCK, torch.device("meta"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            n_params = sum(p.numel() for p in build(config, **kwargs).parameters())
    except (ValueError, TypeError):
        return  # the real build below reports what is wrong with this task
    membudget.require_fits(n_params, f"{key} with random weights")


def _random_model(key: str, task: str, attn: str | None, scale: tuple[tuple[str, int], ...] = ()):
    """(untrained model from the variant's config, scaled by ``scale``, its shipped tokenizer); reproducible seed."""
    variant = _catalog_variant(key)
    if variant is None:
        raise ExplorerError(f"Random-weight mode needs a catalog key, not {shorten(key)!r}: pick a variant.")
    config = build.apply_overrides(build.make_config(key), dict(scale)) if scale else build.make_config(key)
    tokenizer = (tokenizers.tokenizer_with_mask if task == "masked-lm" else tokenizers.shipped_tokenizer)(
        variant.tokenizer, variant.model_type)
    if getattr(config, "vocab_size", None) is not None and config.vocab_size < len(tokenizer):
        config.vocab_size = int(len(tokenizer))  # every token id must have an embedding row
    kwargs = {"attn_implementation": attn} if attn else {}
    cls = _auto_class(task)
    construct = cls.from_config if hasattr(cls, "from_config") else cls._from_config
    if task == "seq2seq" and variant.head == "bert2bert":  # two BERTs composed: no Auto class builds it from one
        from transformers import EncoderDecoderModel

        config = custom_models.bert2bert_config(config)
        construct = EncoderDecoderModel._from_config
    _require_random_fits(key, construct, config, kwargs)
    try:
        with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(RANDOM_SEED)
            model = construct(config, **kwargs)  # Auto classes have from_config, concrete ones _from_config
    except (ValueError, TypeError) as err:
        raise ExplorerError(f"{shorten(key)!r} ({config.model_type}) has no {task!r} model in transformers: "
                            f"{_first_line(err)}") from err
    return model.eval(), tokenizer


def _place(model: torch.nn.Module, device: str, dtype: torch.dtype, name: str,
           ) -> tuple[torch.nn.Module, str, str, tuple[Notice, ...]]:
    """Move to ``device`` in ``dtype``; GPU out-of-memory falls back to the CPU in float32 with a notice.

    Returns (model, device, dtype name, notices). A model already in ``dtype`` is not cast again, so
    the float32 layers transformers keeps in a half-precision load (``_keep_in_fp32_modules``) stay so.
    """
    try:
        if model.dtype != dtype:
            model = model.to(dtype=dtype)
        return model.to(device=device), device, placement.dtype_name(dtype), ()
    except (torch.cuda.OutOfMemoryError, RuntimeError) as err:
        if device == "cpu" or (not isinstance(err, torch.cuda.OutOfMemoryError)
                               and "out of memory" not in str(err).lower()):
            raise
        model.to(device="cpu", dtype=torch.float32)  # bring back the half that made it
        if device == "cuda":
            torch.cuda.empty_cache()
        return model, "cpu", "float32", (
            Notice("fallback", f"{device.upper()} ran out of memory: {name} runs on the CPU in float32 instead."),)


# transformers 5 is not thread-safe while it builds a model (see explorer.architecture.build.BUILD_LOCK):
# every build, here and in explorer.architecture.build, holds the same process-wide lock.
MODEL_BUILD_LOCK = BUILD_LOCK


def _load_uncached(name: str, task: str, attn: str | None, random_weights: bool, allow_pickle: bool,
                   status: weights.WeightsStatus | None, device: str, dtype: torch.dtype,
                   scale: tuple[tuple[str, int], ...] = ()) -> LoadedModel:
    start = time.perf_counter()
    variant = _catalog_variant(name)
    spread = None
    if random_weights:
        model, tokenizer = _random_model(name, task, attn, scale)
    else:
        assert status is not None and status.path is not None
        model, spread = _from_pretrained(status, task, attn, allow_pickle, device, dtype)
        tokenizer = tokenizers.checkpoint_tokenizer(Path(status.path), variant)
    label = variant.name if variant else Path(name).name or name
    if spread is None:
        model, device, dtype_label, notices = _place(model, device, dtype, label)
    else:  # accelerate placed it already: moving it would undo the placement
        device, dtype_label = spread.device, placement.dtype_name(next(model.parameters()).dtype)
        notices = (Notice("offload", f"{label} is too big for one device: {spread.summary()}."),)
    return LoadedModel(name, label, model, tokenizer, device, dtype_label, status.path if status else None,
                       status.source if status else None, random_weights, time.perf_counter() - start, notices)


def load_model(ref: ModelRef, task: str = "base", *, attn_implementation: str | None = None,
               allow_pickle: bool = False, device: str | None = None, dtype: str | torch.dtype | None = None,
               purpose: str | None = None, scale: tuple[tuple[str, int], ...] = ()) -> LoadedModel:
    """A shared, eval-mode model + tokenizer for a model resolved already
    (:func:`explorer.runtime.resolve.resolve`: where its weights are, its kind, untrained or not; nothing about it
    is asked again).

    ``device``: auto (None), cpu, cuda or mps; ``dtype``: auto (None), float32, bfloat16 or float16
    (:mod:`explorer.runtime.placement` checks both and says what to pick when this machine cannot).
    ``scale``: knobs set on an untrained model's config (:data:`explorer.architecture.build.KNOBS`: fewer layers,
    a narrower width), a scaled-down copy of a variant too big to build whole.
    Missing weights raise ExplorerError at once (no network) naming how to get them; a model of the
    wrong kind for ``task`` (an encoder as a causal LM) is refused before loading, in the words of
    :func:`explorer.runtime.modelkind.check` (``purpose`` names the page or command that needs it). Two
    threads asking for the same model wait on one load; different models load in parallel.
    """
    name = ref.spec
    if task not in TASKS:
        raise ExplorerError(f"Unknown task {task!r}: use one of {', '.join(TASKS)}.")
    if not name:
        raise ExplorerError("No model given: pick a catalog key or type a directory.")
    device = placement.resolve_device(device)
    torch_dtype = placement.resolve_dtype(dtype, device)  # before any file is read: a bad choice costs nothing
    random_weights = ref.random_weights
    ref.check(task, purpose)  # its kind, before saying how to get its weights
    status = None if random_weights else _ready(ref)
    ckey = (name, task, attn_implementation, random_weights, allow_pickle, device,
            status.path if status else None, weights.weights_stamp(status.path if status else None),
            placement.dtype_name(torch_dtype), scale)
    if (hit := modelcache.cached(ckey)) is not None:
        return hit
    cancel.check()  # a request out of budget does not start another load (a cache hit above is free)
    # a load is paid once for every later request (the model cache keeps it) and cannot be cut half-way: its time is
    # not charged to this request's budget (explorer.runtime.cancel.unbudgeted), its memory is
    with cancel.unbudgeted(), modelcache.key_lock(ckey):
        if (hit := modelcache.cached(ckey)) is not None:  # another session loaded it while we waited
            return hit
        with MODEL_BUILD_LOCK:
            loaded = _load_uncached(name, task, attn_implementation, random_weights, allow_pickle, status, device,
                                    torch_dtype, scale)
        modelcache.store(ckey, loaded)
    return loaded
