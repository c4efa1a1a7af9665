"""A small on-disk cache for results that are slow to compute and cheap to store.

Counting the parameters of all catalog variants means importing ~20 transformers model
modules (tens of seconds on a busy 2-core machine); the counts only change when a config,
the custom heads or the library versions change, so they are stored under a key that hashes
all of those. Location: ``$EXPLORER_CACHE_DIR`` or ``~/.cache/transformer-explorer``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from explorer.core import settings

__all__ = ["cache_dir", "fingerprint", "load", "publish_dir", "save"]

_PUBLISH = threading.Lock()  # two publishes to the same folder in one process take turns at the rename


def cache_dir() -> Path:
    """``EXPLORER_CACHE_DIR``, else ``~/.cache/transformer-explorer`` (:mod:`explorer.core.settings`)."""
    return Path(settings.CACHE_DIR.value()).expanduser()


def fingerprint(*parts: object) -> str:
    """A stable hash of JSON-able parts (config text, head, versions...)."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def load(name: str) -> dict[str, Any]:
    """The stored mapping ``name`` (empty when absent or unreadable: it is only a cache)."""
    try:
        data = json.loads((cache_dir() / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(name: str, data: dict[str, object]) -> None:
    """Write atomically: a temporary sibling, flushed to disk, then renamed over the old file.

    A reader (or a process killed mid-write) sees the previous file or the new one, never half of
    one; a leftover temporary file is removed. Failures are ignored: this is only a cache.
    """
    tmp: str | None = None
    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp", encoding="utf-8") as f:
            tmp = f.name
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, folder / f"{name}.json")
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def publish_dir(built: Path, target: Path) -> None:
    """Rename a finished folder ``built`` (made beside ``target``) into place, atomically for a reader.

    An earlier ``target`` is first moved aside into a temporary folder of the same parent (a rename, so
    a reader never sees a half-replaced folder), then removed. Used by every download-free writer of a
    model folder: the Gemma conversion and the pretraining lab's checkpoints.
    """
    with _PUBLISH:
        aside = None
        if target.exists():
            aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-old-", dir=target.parent))
            os.replace(target, aside / target.name)
        os.replace(built, target)
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)
