"""The CLI's JSON is always JSON: NaN and infinities (plain, numpy scalars, numpy arrays, nested) are written as null
and counted in one ``note:`` line on stderr; a document without them is printed as it was, with no note."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from explorer.cli import print_json


def _strict(text: str) -> object:
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the JSON"))


def test_non_finite_numbers_become_null_and_are_counted_once(capsys) -> None:
    print_json({"nan": math.nan, "inf": [1.5, math.inf, -math.inf], "numpy": np.float32("nan"),
                "array": np.array([[1.0, np.inf], [np.nan, 2.0]]), "ints": np.arange(3), "flag": np.bool_(True),
                "nested": ({"deep": [float("nan")]}, "text"), "fine": np.float64(0.25)})
    out, err = capsys.readouterr()
    assert _strict(out) == {"nan": None, "inf": [1.5, None, None], "numpy": None, "array": [[1.0, None], [None, 2.0]],
                            "ints": [0, 1, 2], "flag": True, "nested": [{"deep": [None]}, "text"], "fine": 0.25}
    assert err.splitlines() == ["note: 7 value(s) were not finite numbers (NaN or infinity) and are written as null."]


def test_a_finite_document_is_printed_unchanged_without_a_note(capsys) -> None:
    doc = {"a": [1, 2.5, None, "x", True], "b": {"c": -0.0}, "é": "東京"}
    print_json(doc)
    out, err = capsys.readouterr()
    assert _strict(out) == doc and err == "" and "東京" in out  # ensure_ascii=False as before
