"""The path fence: on a shared server, typed paths reach only the models folder and the HF cache.

With ``EXPLORER_RESTRICT_PATHS=1`` (the app turns it on by itself when the server is not bound to
localhost) every directory a visitor types is resolved (``~``, ``..`` and symbolic links included)
and must lie under an allowed root: ``EXPLORER_MODELS_DIR``, the converted-models cache, or the
Hugging Face cache. Anything else gets one and the same message, whether it exists or not, so the
server cannot be probed for its files; paths shown back are relative to their root, never the
server's absolute locations (the bundled model shows as its package name).

Every typed path passes :func:`check_path_text` first (a path the OS could not even look up is a
message, not an OSError), :func:`models_dir_env` is the one reading of ``EXPLORER_MODELS_DIR`` (declared,
like every ``EXPLORER_*`` variable, in :mod:`explorer.core.settings`) and
:func:`models_dir_default` the one reading of "the user's models directory" (argument, else that variable).

>>> import os
>>> os.environ["EXPLORER_RESTRICT_PATHS"] = "1"
>>> check("/etc")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: On this server, models load only from its models folder and the Hugging Face ...
>>> del os.environ["EXPLORER_RESTRICT_PATHS"]
>>> check("/etc") == Path("/etc")
True
"""

from __future__ import annotations

import os
from pathlib import Path

from explorer.core import persist, settings
from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import PATH_CHARS

__all__ = ["REFUSED", "allowed_roots", "check", "check_path_text", "hf_cache_dir",
           "models_dir_default", "models_dir_env", "models_dir_problem", "public", "restricted"]

REFUSED = ("On this server, models load only from its models folder and the Hugging Face cache: type a "
           "catalog key, or a folder name inside the models folder.")


def restricted() -> bool:
    """Whether typed paths are fenced (``EXPLORER_RESTRICT_PATHS`` is 1/true/yes/on; a value that is neither on
    nor off is an ExplorerError, never silently unfenced)."""
    return settings.RESTRICT_PATHS.value()


def models_dir_env() -> str | None:
    """``EXPLORER_MODELS_DIR`` as set, surrounding spaces dropped; None when unset or blank.

    The one place the variable is read: the fence's roots, :func:`models_dir_default` and the app's
    models field all agree on what "set" means (a value of spaces is unset everywhere).
    """
    return settings.MODELS_DIR.read()


def allowed_roots() -> list[tuple[str, Path]]:
    """(label, resolved directory) of every root a fenced path may lie under."""
    roots: list[tuple[str, Path]] = []
    env = models_dir_env()
    if env:
        roots.append(("models folder", Path(env).expanduser()))
    roots.append(("models cache", persist.cache_dir() / "models"))  # where the bundled decoder is converted
    hf = hf_cache_dir()
    if hf:
        roots.append(("Hugging Face cache", Path(hf)))
    return [(label, path.resolve()) for label, path in roots]


def _inside(path: Path) -> tuple[str, Path] | None:
    for label, root in allowed_roots():
        if path == root or path.is_relative_to(root):
            return label, root
    return None


def check(text: str | Path) -> Path:
    """The directory a user typed, resolved; when fenced, refused (one message) unless under a root."""
    path = Path(text).expanduser()
    if not restricted():
        return path
    resolved = Path(os.path.realpath(path))  # resolves .. and symlinks without requiring existence
    if _inside(resolved) is None:
        raise ExplorerError(REFUSED)
    return resolved


def public(path: str | Path | None) -> str:
    """How a path is shown: as is locally; when fenced, relative to its root or as the bundled package."""
    if path is None:
        return ""
    if not restricted():
        return str(path)
    resolved = Path(os.path.realpath(path))
    found = _inside(resolved)
    if found is None:
        return "bundled with its PyPI package" if "site-packages" in resolved.parts else "(server folder)"
    label, root = found
    rel = resolved.relative_to(root)
    return f"{label}/{rel}" if str(rel) != "." else label

def check_path_text(text: str, what: str = "path") -> str:
    """``text`` if the OS could accept it as a path, else an ExplorerError.

    A file name over 255 bytes, a path over 4,096 or a NUL byte make ``Path.is_dir()`` raise
    (OSError/ValueError) instead of answering False, so typed paths are checked once here.
    """
    parts = text.replace("\\", "/").split("/")
    if "\0" in text or len(text) > PATH_CHARS or any(len(part.encode()) > 255 for part in parts):
        raise ExplorerError(f"That {what} cannot exist ({shorten(text, 60)!r} is too long or has a NUL byte): "
                            "type the directory that holds config.json.")
    return text


def models_dir_default(models_dir: str | None = None) -> Path | None:
    """The user's models directory: the argument, else ``EXPLORER_MODELS_DIR``, else None (fenced on a
    shared server: a typed directory must lie under an allowed root, see :mod:`explorer.runtime.fence`)."""
    raw = models_dir if models_dir and models_dir.strip() else models_dir_env()
    return check(check_path_text(raw.strip(), "models directory")) if raw and raw.strip() else None


def models_dir_problem(models_dir: str | None = None) -> str | None:
    """Why the user's models directory will find nothing (it is not there, or is a file); None when it is a
    folder or unset. Every variant would otherwise just read 'not present', with no word about the typo."""
    path = models_dir_default(models_dir)
    if path is None or path.is_dir():
        return None
    what = "is a file, not a folder" if path.exists() else "does not exist"
    return (f"The models directory {shorten(public(path))!r} {what}: weights are looked up only in the Hugging "
            "Face cache and among the bundled ones. Type an existing folder, or empty the box.")


def hf_cache_dir() -> str | None:
    """The Hugging Face hub cache to search (None: huggingface_hub's default)."""
    return os.environ.get("HF_HUB_CACHE") or None
