"""A page's imports, made once per process, one page at a time, before the page runs.

Two first visitors at once on a fresh server ran two pages' imports in two threads, and Python hands a thread a
module that another thread is still initialising when their imports wait on each other (transformers' lazy names,
pandas): Why this prediction failed with "cannot import name 'BertTokenizer'". The modules a page imports, read
from its source (not run), are imported here under one lock; the page's own import lines then find them complete.
"""

from __future__ import annotations

import ast
import importlib
import threading
from functools import lru_cache
from pathlib import Path

__all__ = ["ensure", "imported_by"]

_LOCK = threading.Lock()
_DONE: set[Path] = set()


@lru_cache(maxsize=64)
def imported_by(path: Path) -> tuple[str, ...]:
    """The modules a script names in its import lines (``from a import b`` gives ``a`` and, in case ``b`` is a
    submodule, ``a.b``), in order, without ``__future__``."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return tuple(dict.fromkeys(n for n in names if n.partition(".")[0] != "__future__"))


def _load(name: str) -> None:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != name:  # a module the page needs is missing: the page's own import says so
            raise
        # ``from a import b`` where ``b`` is a function or a constant, not a module: nothing to import


def ensure(path: Path) -> None:
    """Import everything the script at ``path`` imports, once per process, one script at a time."""
    if path in _DONE:
        return
    with _LOCK:
        if path in _DONE:
            return
        for name in imported_by(path):
            _load(name)
        _DONE.add(path)
