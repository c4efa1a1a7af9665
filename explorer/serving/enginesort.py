"""A drop-in ``sorted`` for llama-cpp-python's log-probability ranking: the same list, ranked by numpy.

Why: for every token it returns with log-probabilities (each prompt token when a text is scored, each generated
token otherwise), llama-cpp-python 0.3.x ranks the whole vocabulary with
``sorted(zip(logprobs, range(n_vocab)), reverse=True)`` and keeps the top few. Over Gemma's 262,144 pieces that is
0.4-0.5 s of Python per token on this class of CPU, most of a served fill-mask or QA answer. The local engine
(:mod:`explorer.serving.localengine`) puts this function in place of ``sorted`` in the ``llama_cpp.llama`` module
only, so the engine answers byte for byte as before, faster.

Exactly that call shape is ranked by numpy: a fresh ``zip`` of a float sequence (a list of floats or a 1-D float
array) and ``range(len)``, no ``key``, no NaN. Every other call is the builtin's. The result is the builtin's list:
the same pairs, of the same types, in the same order (pairs differ by their index, so the order is total).

This file imports only numpy and the standard library: the engine's launcher loads it by path.

>>> sorted_like_builtin(zip([0.5, -1.0, 0.5], range(3), strict=False), reverse=True)
[(0.5, 2), (0.5, 0), (-1.0, 1)]
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["sorted_like_builtin"]

MIN_FAST = 1024  # below this the builtin is as quick


def _pairs_source(iterable: object) -> Sequence[Any] | np.ndarray | None:
    """The float values behind an unstarted ``zip(values, range(len(values)))``, else None.

    A zip, a list iterator, an array's iterator and a range iterator each tell what they iterate and from which
    position through ``__reduce__`` (what pickling uses), without being advanced."""
    if type(iterable) is not zip:
        return None
    parts = iterable.__reduce__()[1]
    if len(parts) != 2:
        return None
    try:
        first, second = (part.__reduce__() for part in parts)
    except TypeError:  # an iterator that cannot tell (a generator): the builtin's
        return None
    if len(first) != 3 or len(second) != 3 or first[2] != 0 or second[2] != 0:
        return None  # not iterators from their start
    values, numbers = first[1][0], second[1][0]
    if type(numbers) is not range or numbers.start != 0 or numbers.step != 1 or numbers.stop != len(values):
        return None
    if isinstance(values, np.ndarray):
        return values if values.ndim == 1 and values.dtype.kind == "f" else None
    if type(values) is list and set(map(type, values)) == {float}:
        return values
    return None


def sorted_like_builtin(iterable: Iterable[Any], /, *, key: Callable[[Any], Any] | None = None,
                        reverse: bool = False) -> list[Any]:
    """``sorted(iterable, key=key, reverse=reverse)``, ranked by numpy for ``zip(floats, range(n))``."""
    values = _pairs_source(iterable) if key is None else None
    if values is None or len(values) < MIN_FAST:
        return builtins.sorted(iterable, key=key, reverse=reverse)
    array = np.asarray(values)
    if np.isnan(array).any():  # Python's order with NaN depends on where it sits: leave it to Python
        return builtins.sorted(iterable, reverse=reverse)
    # a stable sort keeps equal values in index order: by value, then by index, as the pairs compare
    order = np.argsort(array, kind="stable")
    if reverse:
        order = order[::-1]
    indices = order.tolist()
    # the pairs' first items as zip gave them: the list's own floats, or the array's scalars of its dtype
    firsts = [values[i] for i in indices] if isinstance(values, list) else list(array[order])
    return list(zip(firsts, indices, strict=True))
