"""The two tiers of the suite: quick tests on tiny stand-ins (`make check`) and slow ones on real things (`make test`).

A test that reaches something real and slow is marked ``slow`` at collection by :func:`mark_slow`, from the
fixtures it takes (an argument, a fixture of a fixture, or ``pytest.mark.usefixtures``: :data:`REAL_FIXTURES`)
or the ``browser`` mark every file of tests/browser/ carries. Nothing else needs marking by hand.

Every other test runs with tiny stand-ins for the two bundled models (``EXPLORER_BUNDLED_DECODER_DIR``: a 3-layer
random Gemma 3 with GPT-2's tokenizer; ``EXPLORER_BUNDLED_ENCODER_DIR``: a 2-layer BERT laid out as
all-MiniLM-L6-v2), so a page or a command that starts with Gemma 3 270M runs its whole path in a second. A test
whose oracle needs the real model (a real answer, real weights' numbers) takes ``bundled_decoder`` or
``bundled_encoder``, and is slow. The stand-ins are set before any fixture of a test is made (:func:`use`), so a
module fixture built for a quick test is built on them too. `make check` runs ``-m "not slow"`` with the stand-ins
(``EXPLORER_TEST_STAND_INS=1``); `make test` runs everything, on the real models unless that variable is set too.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# Fixtures that reach a real bundled model, a real engine or a server of their own (tests/conftest.py).
REAL_FIXTURES = frozenset({"bundled_decoder", "bundled_encoder", "served_engine", "served_embedder", "fresh_engine"})
DECODER, ENCODER = "EXPLORER_BUNDLED_DECODER_DIR", "EXPLORER_BUNDLED_ENCODER_DIR"
SWITCH = "EXPLORER_TEST_STAND_INS"  # "1": quick tests see the tiny stand-ins (`make check` sets it)
_ORIGINAL = {name: os.environ.get(name) for name in (DECODER, ENCODER)}
_state: dict[str, object] = {"dirs": None, "real": None}


def is_real(item: pytest.Item) -> bool:
    """True for a test that reaches a real model, engine or browser (hence marked slow)."""
    named = set(getattr(item, "fixturenames", ()))
    return item.get_closest_marker("browser") is not None or bool(REAL_FIXTURES & named)


def mark_slow(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test :func:`is_real` finds (hand marks stay: a slow test of another kind)."""
    for item in items:
        if is_real(item) and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)


def _stand_ins() -> dict[str, str]:
    """The tiny stand-ins, saved once per process (a worker of pytest-xdist saves its own)."""
    if _state["dirs"] is None:
        from tests.tiny_gemma import save_tiny_gemma
        from tests.tiny_models import save_tiny

        root = Path(tempfile.mkdtemp(prefix="stand-ins-"))
        _state["root"] = root
        _state["dirs"] = {DECODER: str(save_tiny_gemma(root / "gemma3-270m")),
                          ENCODER: str(save_tiny("minilm", root / "all-MiniLM-L6-v2"))}
    return _state["dirs"]  # type: ignore[return-value]


def _forget_streamlit_results() -> None:
    """Results cached under a model's key were computed on the other tier's model: drop them."""
    if "streamlit" in sys.modules:
        import streamlit as st

        st.cache_data.clear()
        st.cache_resource.clear()


def use(item: pytest.Item) -> None:
    """Point the bundled models at the stand-ins for a quick test, at the real ones for a slow test."""
    real = item.get_closest_marker("slow") is not None or os.environ.get(SWITCH) != "1"
    if real:
        for name, value in _ORIGINAL.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    else:
        os.environ.update(_stand_ins())
    if _state["real"] is not None and _state["real"] != real:
        _forget_streamlit_results()
    _state["real"] = real


def finish() -> None:
    """Put the environment back and remove the stand-ins (end of the session)."""
    for name, value in _ORIGINAL.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    if "root" in _state:
        shutil.rmtree(_state["root"], ignore_errors=True)  # type: ignore[arg-type]


def check_fixture(argname: str, item: pytest.Item | None) -> None:
    """A real fixture asked for at run time (``request.getfixturevalue``) by a test not marked slow fails: the
    marking happens at collection, from the fixtures a test names."""
    if argname in REAL_FIXTURES and item is not None and item.get_closest_marker("slow") is None:
        pytest.fail(f"{item.nodeid} reaches {argname!r} at run time: name it among the test's arguments or in "
                    "`pytest.mark.usefixtures` so that it is marked slow (tests/tiers.py).", pytrace=False)
