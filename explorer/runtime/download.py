"""Fetching a variant's weights from the Hugging Face hub: the one function that goes online.

``download()`` lifts huggingface_hub's offline mode for that call only, lists the files worth having
(configs, tokenizers, safetensors; never pickles), fetches them with short timeouts while reporting
the byte fraction done, and turns network, HTTP and disk failures into one line. While it runs,
``explorer.runtime.weights.locate`` reports the variant as "downloading".

>>> download("no such model")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: 'no such model' has no published checkpoint to download: use random-weight mode, ...
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

from tqdm.auto import tqdm

from explorer.core.errors import ExplorerError, shorten
from explorer.runtime import hubnames
from explorer.runtime.fence import hf_cache_dir, models_dir_default
from explorer.runtime.resolve import resolve
from explorer.runtime.weights import _DOWNLOADING, WeightsStatus, variant_hub_id

__all__ = ["DOWNLOAD_PATTERNS", "HUB_TIMEOUT_S", "download"]

# Files worth downloading: configs, tokenizers and safetensors weights (never pickles).
DOWNLOAD_PATTERNS = (".json", ".txt", ".model", ".safetensors")
HUB_TIMEOUT_S = 5.0
_DOWNLOAD_LOCK = threading.Lock()  # one download at a time: offline mode is process-wide


class _Online:
    """Lift huggingface_hub's offline mode for one download, then restore it.

    huggingface_hub reads HF_HUB_OFFLINE once at import, and checks the module constant
    on every request, so flipping the constant is the only switch that works after import.
    """

    def __enter__(self) -> None:
        from huggingface_hub import constants

        self._saved = constants.HF_HUB_OFFLINE
        constants.HF_HUB_OFFLINE = False

    def __exit__(self, *exc: object) -> None:
        from huggingface_hub import constants

        constants.HF_HUB_OFFLINE = self._saved


def _list_files(hub_id: str) -> list[tuple[str, int]]:
    """(file name, size) of the files worth downloading; one request with a short timeout."""
    from huggingface_hub import HfApi

    info = HfApi().model_info(hub_id, timeout=HUB_TIMEOUT_S, files_metadata=True)
    files = [(s.rfilename, int(s.size or 0)) for s in info.siblings or []
             if s.rfilename.endswith(DOWNLOAD_PATTERNS) and "/" not in s.rfilename]
    if not any(name.endswith(".safetensors") for name, _ in files):
        raise ExplorerError(f"{hub_id} publishes no safetensors weights; only pickled files, which are not "
                            "downloaded for safety. Save a safetensors copy with save_pretrained yourself.")
    return files


def _byte_bar(report: Callable[[int], None]):
    """A tqdm class for hf_hub_download that reports every chunk's bytes to ``report``.

    The bytes are counted before tqdm sees them, so this works even when huggingface_hub
    disables its bars (HF_HUB_DISABLE_PROGRESS_BARS).
    """
    class _Bar(tqdm):
        def update(self, n: float | None = 1) -> bool | None:
            report(int(n or 0))
            return super().update(n)

    return _Bar


def _fetch(hub_id: str, files: list[tuple[str, int]], target: Path | None,
           progress: Callable[[float, str], None] | None) -> None:
    """Download each file (to ``target`` or the HF cache), reporting the byte fraction done."""
    from huggingface_hub import hf_hub_download

    total, done = max(1, sum(size for _, size in files)), [0]
    for name, size in files:
        start = done[0]

        def report(n: int, name: str = name) -> None:
            done[0] += n
            if progress:
                progress(min(1.0, done[0] / total), f"{hub_id}: {name}")

        report(0)
        hf_hub_download(hub_id, name, local_dir=str(target) if target else None, tqdm_class=_byte_bar(report),
                        cache_dir=None if target else hf_cache_dir(), etag_timeout=HUB_TIMEOUT_S)
        done[0] = start + size  # files already cached report no bytes: count them as done
    if progress:
        progress(1.0, f"{hub_id}: done")


def _fetch_into(hub_id: str, target: Path, report: Callable[[float, str], None]) -> None:
    """Download into a hidden sibling, then swap it in: ``target`` is the old copy or the whole new
    one, never a half-downloaded mix (an interrupted download leaves the sibling, which the next
    download reuses: files already there are not fetched again)."""
    partial = target.with_name(f".{target.name}.downloading")
    _fetch(hub_id, _list_files(hub_id), partial, report)
    old = target.with_name(f".{target.name}.old")
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
    os.replace(partial, target)
    shutil.rmtree(old, ignore_errors=True)


def _hub_errors() -> tuple[type[Exception], ...]:
    """A failed download: OSError (disk, HTTP status), ValueError (bad id), transport errors (not OSErrors)."""
    from huggingface_hub.utils import httpx

    return (OSError, ValueError, httpx.HTTPError)


def download(key: str, models_dir: str | None = None,
             progress: Callable[[float, str], None] | None = None) -> WeightsStatus:
    """Fetch a variant's reference checkpoint (safetensors + config + tokenizer) from the hub.

    Goes to ``<models_dir>/<key>/`` when a models directory is set, else to the HF cache.
    Failure (no network, unknown repo) raises ExplorerError with one line, within seconds.
    """
    is_key, hub_id = variant_hub_id(key)
    # a legacy name (bert-base-uncased) is asked for as the catalog checkpoint it names, where the hub moved it
    hub_id = hub_id if is_key else (hubnames.canonical(key) if hubnames.hub_id_text(key) else None)
    if not hub_id:
        raise ExplorerError(f"{shorten(key)!r} has no published checkpoint to download: use random-weight mode, "
                            "or a catalog key from `python -m explorer models`.")
    root = models_dir_default(models_dir)
    _DOWNLOADING[key] = 0.0

    def report(fraction: float, what: str) -> None:
        _DOWNLOADING[key] = fraction
        if progress:
            progress(fraction, what)

    try:
        with _DOWNLOAD_LOCK, _Online():
            if root is None:  # the HF cache is content-addressed: a file appears only when complete
                _fetch(hub_id, _list_files(hub_id), None, report)
            else:
                _fetch_into(hub_id, root / key, report)
    except _hub_errors() as err:  # network, HTTP, disk: one line for the user
        first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
        raise ExplorerError(f"Download of {hub_id} failed ({type(err).__name__}: {first}). "
                            "Check the network connection, or copy the weights into EXPLORER_MODELS_DIR.") from err
    finally:
        _DOWNLOADING.pop(key, None)
    found = resolve(key, models_dir).status  # where the weights are now, as every page will find them
    if found is None:
        raise ExplorerError(f"{shorten(key)} was downloaded but cannot be found: check the models folder.")
    return found
