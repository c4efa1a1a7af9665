"""Cached answers that are complete: a result cut short by its request's budget is shown, never kept.

``st.cache_data`` keeps whatever a function returns, so an answer cut by the budget (a "stopped" notice: the
tokens, examples or blanks reached in time) was served from the cache ever after, however often the visitor asked
again. :func:`cache_complete` is ``st.cache_data`` for such functions: a cut result leaves the cached function
as an exception (Streamlit keeps no exception) and is returned to the caller from there, so the next request
computes it again, or goes on from the parts that were complete (:mod:`explorer.explain.parts`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar

import streamlit as st

__all__ = ["Complete", "cache_complete", "is_cut"]

P = ParamSpec("P")
R = TypeVar("R")


class _Cut(Exception):  # noqa: N818  (a result in transit past the cache, not an error)
    def __init__(self, result: object) -> None:
        super().__init__("a result cut short by its request's budget")
        self.result = result


def is_cut(result: object, depth: int = 3) -> bool:
    """Whether a result (or a result inside it: a tuple of columns, a field) carries a "stopped" notice."""
    if depth < 0:
        return False
    notices = getattr(result, "notices", ())
    if isinstance(notices, tuple | list) and any(getattr(n, "kind", None) == "stopped" for n in notices):
        return True
    if isinstance(result, tuple | list):
        return any(is_cut(r, depth - 1) for r in result)
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return any(is_cut(getattr(result, f.name), depth - 1) for f in dataclasses.fields(result))
    return False


class Complete(Generic[P, R]):
    """A function whose complete results ``st.cache_data`` keeps (callable as the function, ``clear()`` as the
    cache's)."""

    def __init__(self, fn: Callable[P, R], cache_kwargs: dict[str, Any]) -> None:
        @functools.wraps(fn)
        def raising(*args: P.args, **kwargs: P.kwargs) -> R:
            result = fn(*args, **kwargs)
            if is_cut(result):
                raise _Cut(result)
            return result

        self._cached = st.cache_data(**cache_kwargs)(raising)
        functools.update_wrapper(self, fn)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return self._cached(*args, **kwargs)
        except _Cut as cut:
            return cut.result  # type: ignore[return-value]  # what the function returned, held by the exception

    def clear(self) -> None:
        self._cached.clear()


def cache_complete(**cache_kwargs: Any) -> Callable[[Callable[P, R]], Complete[P, R]]:
    """``st.cache_data(**cache_kwargs)`` that keeps only complete results (see the module docstring)."""
    def decorate(fn: Callable[P, R]) -> Complete[P, R]:
        return Complete(fn, cache_kwargs)
    return decorate
