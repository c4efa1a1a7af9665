"""Tokenizers shared between threads: every call of a shared tokenizer under its own lock.

A fast tokenizer keeps its truncation and padding settings on the Rust object and sets them on every call, so two
Streamlit sessions' threads calling one cached tokenizer with their own settings interleave: QA's
``truncation="only_second"`` meets a similarity batch of single texts ("Truncation error: Second sequence not
provided"), or the Rust object is "Already borrowed". :func:`shared` gives a tokenizer a subclass whose
``__call__`` and ``encode`` take the tokenizer's own re-entrant lock (isinstance still holds); :func:`lock_of`
holds it around several calls that must see the same settings. Locks live beside the tokenizer, not on it: an
RLock cannot be deep-copied, and the explorer copies a cached tokenizer to add a mask token.

It imports nothing heavy (the tokenization package imports transformers at its top).

>>> from explorer.tokenization import load_tokenizer
>>> tok = load_tokenizer("gpt2")
>>> is_locked(tok), tok("Hello world")["input_ids"]
(True, [15496, 995])
"""

from __future__ import annotations

import threading
import weakref
from typing import TypeVar

__all__ = ["is_locked", "lock_of", "shared"]

_T = TypeVar("_T")
_LOCKS: weakref.WeakKeyDictionary[object, threading.RLock] = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()
_LOCKED_CLASSES: dict[type, type] = {}


def lock_of(tokenizer: object) -> threading.RLock:
    """The tokenizer's own lock (re-entrant): hold it around several calls that must see the same settings."""
    with _GUARD:
        if tokenizer not in _LOCKS:
            _LOCKS[tokenizer] = threading.RLock()
        return _LOCKS[tokenizer]


def _locked_class(cls: type) -> type:
    """``cls`` with ``__call__`` and ``encode`` run under the instance's lock (a subclass: isinstance holds)."""
    with _GUARD:
        if cls not in _LOCKED_CLASSES:
            def __call__(self: object, *args: object, **kwargs: object) -> object:
                with lock_of(self):
                    return cls.__call__(self, *args, **kwargs)

            def encode(self: object, *args: object, **kwargs: object) -> object:
                with lock_of(self):
                    return cls.encode(self, *args, **kwargs)  # type: ignore[attr-defined]

            _LOCKED_CLASSES[cls] = type(cls.__name__, (cls,), {"__call__": __call__, "encode": encode,
                                                               "__module__": cls.__module__, "_explorer_locked": True})
        return _LOCKED_CLASSES[cls]


def shared(tokenizer: _T) -> _T:
    """Make a tokenizer safe to share between threads (every call under its own lock); returns it."""
    if not is_locked(tokenizer):
        tokenizer.__class__ = _locked_class(type(tokenizer))
    return tokenizer


def is_locked(tokenizer: object) -> bool:
    """Whether :func:`shared` made this tokenizer's calls take its lock."""
    return bool(getattr(type(tokenizer), "_explorer_locked", False))
