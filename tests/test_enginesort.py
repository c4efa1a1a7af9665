"""The local engine's ``sorted`` (explorer/serving/enginesort.py) against the builtin: the same list, pair for pair
and type for type, for the call llama-cpp-python makes and for every call it must leave to the builtin."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.serving.enginesort import MIN_FAST, sorted_like_builtin

N = 5 * MIN_FAST


def _rows() -> dict[str, object]:
    """Log-probability rows as the engine holds them: ties, -inf, signed zeros, float32 and float64, a list."""
    rng = np.random.default_rng(0)
    row = rng.standard_normal(N).astype(np.float32)
    row[::5] = row[3]  # many ties: their order is the index's
    row[[7, 11]] = -np.inf
    row[13], row[17] = 0.0, -0.0  # equal as floats: by index
    return {"float32 array": row, "float64 array": row.astype(np.float64), "list of floats": row.tolist(),
            "float16 array": row.astype(np.float16)}


@pytest.mark.parametrize("reverse", [True, False])
@pytest.mark.parametrize("name", list(_rows()))
def test_the_engines_call_gives_the_builtins_list(name: str, reverse: bool) -> None:
    values = _rows()[name]
    ours = sorted_like_builtin(zip(values, range(len(values)), strict=False), reverse=reverse)
    theirs = sorted(zip(values, range(len(values)), strict=False), reverse=reverse)
    assert ours == theirs
    assert [type(v) for v, _ in ours] == [type(v) for v, _ in theirs]


def _not_the_engines_call() -> dict[str, tuple]:
    row = _rows()["float32 array"]
    started = zip(row, range(N), strict=False)
    next(started)
    with_nan = row.copy()
    with_nan[[2, 40]] = np.nan
    return {
        "a zip already started": (started, {}),
        "a key": (zip(row, range(N), strict=False), {"key": lambda pair: -pair[1]}),
        "three sequences": (zip(row, range(N), range(N), strict=False), {}),
        "a range not from 0": (zip(row[:-1], range(1, N), strict=False), {}),
        "ints and floats": (zip([1, *row.tolist()[1:]], range(N), strict=False), {}),
        "strings": (zip([str(v) for v in row], range(N), strict=False), {}),
        "a 2-D array": (zip(row.reshape(-1, 5), range(N // 5), strict=False), {"key": lambda pair: pair[1]}),
        "a short row": (zip(row[:10], range(10), strict=False), {}),
        "a generator": (((v, i) for i, v in enumerate(row)), {}),
        "a zip over a generator": (zip((v for v in row), range(N), strict=False), {}),
        "a zip over a tuple": (zip(tuple(row.tolist()), range(N), strict=False), {}),
        "a strict zip": (zip(row, range(N), strict=True), {}),
        "NaN in the row": (zip(with_nan, range(N), strict=False), {}),
    }


def _comparable(pair: tuple) -> tuple:
    """A pair as plain values: NaN as a word (NaN != NaN), an array's row as a tuple."""
    def plain(v: object) -> object:
        if isinstance(v, np.ndarray):
            return tuple(v.tolist())
        return "nan" if isinstance(v, float | np.floating) and math.isnan(v) else v

    return tuple(plain(v) for v in pair)


@pytest.mark.parametrize("reverse", [True, False])
@pytest.mark.parametrize("case", list(_not_the_engines_call()))
def test_every_other_call_is_the_builtins(case: str, reverse: bool) -> None:
    made, kwargs = _not_the_engines_call()[case]
    again, _ = _not_the_engines_call()[case]  # the same input, made afresh, for the builtin
    ours = sorted_like_builtin(made, reverse=reverse, **kwargs)
    theirs = sorted(again, reverse=reverse, **kwargs)
    assert [_comparable(p) for p in ours] == [_comparable(p) for p in theirs]


def test_the_local_engine_ranks_with_it(served_engine) -> None:
    """The engine the tests (and `make run-served`) start puts it in place: its launcher says so in its log. That
    the answers are the stock engine's, field by field, is checked by benchmarks/bench_enginesort.py."""
    if not hasattr(served_engine, "log"):
        pytest.skip("an engine someone else runs (EXPLORER_TEST_ENDPOINT_URL)")
    assert "log-probabilities ranked by numpy" in served_engine.log.read_text(errors="replace")
