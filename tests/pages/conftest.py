"""Shared helpers of the AppTest page tests (one home: import them from here).

``page_app("fill_mask.py", models="bert-base")`` builds an AppTest of a page with URL parameters;
``assert_clean(at)`` fails on an exception and, unless the test provoked one, on a red error box;
``figures(at)`` gives every plotly figure as a dict and ``plotly_array`` decodes plotly 7's typed arrays;
``shown(at.warning)`` gives boxes' texts as a reader sees them (notices are markdown-escaped: app.ui.notice).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

PAGES = Path(__file__).resolve().parents[2] / "pages"


def page_app(page: str, *, timeout: float = 240, **query: str) -> AppTest:
    """An AppTest of ``pages/<page>`` with ``query`` preset in ``st.query_params`` (not run yet)."""
    at = AppTest.from_file(str(PAGES / page), default_timeout=timeout)
    for name, value in query.items():
        at.query_params[name] = value
    return at


def assert_clean(at: AppTest, *, errors_expected: bool = False) -> None:
    """No exception; no ``st.error`` box either unless ``errors_expected`` (bad input typed on purpose)."""
    assert not at.exception, at.exception[0].message if at.exception else ""
    if not errors_expected:
        assert not at.error, f"error box shown: {at.error[0].value}"


def shown(boxes) -> list[str]:
    """The texts of alert boxes as a reader sees them: the backslashes of markdown escapes taken off."""
    return [b.value.replace("\\", "") for b in boxes]


def figures(at: AppTest) -> list[dict]:
    """Every plotly figure on the page, as the JSON spec Streamlit received (AppTest has no accessor)."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def plotly_array(value: object) -> np.ndarray:
    """A trace array: plotly 7 ships numpy arrays as ``{"dtype", "bdata", "shape"}`` base64 typed arrays."""
    if not isinstance(value, dict):
        return np.asarray(value)
    flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    shape = value.get("shape")
    if shape is None:
        return flat
    dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else list(shape)
    return flat.reshape(dims)
