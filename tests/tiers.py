"""The tiers of the suite: quick tests on tiny stand-ins (`make check`) and slow ones on real things (`make test`).

A test that reaches something real and slow is marked ``slow`` at collection by :func:`mark_slow`, from the
fixtures it takes (an argument, a fixture of a fixture, or ``pytest.mark.usefixtures``: :data:`REAL_FIXTURES`)
or the ``browser`` mark every file of tests/browser/ carries. Nothing else needs marking by hand.

Every other test runs with tiny stand-ins for the two bundled models (``EXPLORER_BUNDLED_DECODER_DIR``: a 3-layer
random Gemma 3 with GPT-2's tokenizer; ``EXPLORER_BUNDLED_ENCODER_DIR``: a 2-layer BERT laid out as
all-MiniLM-L6-v2), so a page or a command that starts with Gemma 3 270M runs its whole path in a second. A test
whose oracle needs the real model (a real answer, real weights' numbers) takes ``bundled_decoder`` or
``bundled_encoder``, and is slow (so is one taking a real engine; ``cut_engine`` serves Gemma with its vocabulary
cut, for "served equals in-process" oracles). The stand-ins are set before any fixture of a test is made
(:func:`use`), so a module fixture built for a quick test is built on them too. `make check` runs ``-m "not slow and
not heavy"`` with the stand-ins (``EXPLORER_TEST_STAND_INS=1``); `make test` runs everything: the quick tests on the
stand-ins on two workers, then the slow ones one at a time on the real models (on two workers, the ``alone`` module
that loads the cores on purpose run after them by itself, they took 14-23 min instead of 26-31, as the machine
allowed, and passed two runs of the last four: not in `make test`, see the Makefile).

``heavy``: a quick test that still takes more than :data:`HEAVY_SECONDS` on the stand-ins (a real training run, a
command in a process of its own), listed in :data:`HEAVY_LIST` from a measured run (`make tiers` rewrites it:
``python -m tests.tiers RECORD.json``). `make check` leaves them out to stay within five minutes; `make test` runs
them beside the other quick tests. A test missing from the list only makes `make check` slower, which its
``--durations`` line shows.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# Fixtures that reach a real bundled model, a real engine or a server of their own (tests/conftest.py).
REAL_FIXTURES = frozenset({"bundled_decoder", "bundled_encoder", "served_engine", "served_embedder", "fresh_engine",
                           "cut_engine"})
DECODER, ENCODER = "EXPLORER_BUNDLED_DECODER_DIR", "EXPLORER_BUNDLED_ENCODER_DIR"
SWITCH = "EXPLORER_TEST_STAND_INS"  # "1": quick tests see the tiny stand-ins (`make check` sets it)
_ORIGINAL = {name: os.environ.get(name) for name in (DECODER, ENCODER)}
HEAVY_LIST = Path(__file__).with_name("heavy.txt")
HEAVY_SECONDS = 0.5  # a quick test over this (its call, or a fixture of its own, on one of two workers) is heavy
HEAVY_FILE_SECONDS = 8.0  # a file whose module fixture is over HEAVY_SECONDS is heavy when it all takes more
_state: dict[str, object] = {"dirs": None, "real": None}


def is_real(item: pytest.Item) -> bool:
    """True for a test that reaches a real model, engine or browser (hence marked slow)."""
    named = set(getattr(item, "fixturenames", ()))
    return item.get_closest_marker("browser") is not None or bool(REAL_FIXTURES & named)


def mark_slow(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test :func:`is_real` finds (hand marks stay: a slow test of another kind), and
    ``heavy`` every quick one :data:`HEAVY_LIST` names."""
    heavy = _heavy_ids()
    for item in items:
        if is_real(item) and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
        elif item.nodeid in heavy and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.heavy)


def _heavy_ids() -> frozenset[str]:
    if not HEAVY_LIST.exists():
        return frozenset()
    lines = HEAVY_LIST.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


RECORD = "EXPLORER_TIERS_RECORD"  # a file: `make tiers` has each test's phases and seconds written there


def record(report: pytest.TestReport, config: pytest.Config) -> None:
    """Keep a test phase's seconds (in pytest-xdist's controller, which sees every worker's reports)."""
    if os.environ.get(RECORD) and not hasattr(config, "workerinput"):
        _state.setdefault("phases", []).append(  # type: ignore[union-attr]
            (report.nodeid, report.when, round(report.duration, 3), report.outcome))


def save_record(config: pytest.Config) -> None:
    if (path := os.environ.get(RECORD)) and not hasattr(config, "workerinput"):
        import json

        Path(path).write_text(json.dumps(_state.get("phases", [])), encoding="utf-8")


def heavy_from_record(phases: list[list[object]], over: float = HEAVY_SECONDS,
                      whole: float = HEAVY_FILE_SECONDS) -> list[str]:
    """The heavy tests of a recorded run: a test whose call takes more than ``over`` seconds; a test whose own
    setup does (a fixture of its own: a setup over ``over`` that is not its file's first); and every test of a
    file whose first setup is over ``over`` (a module's fixture: leaving out only the first test would move its
    cost to the next one) when that setup and the file's other quick tests take more than ``whole`` seconds
    together (a file that stays cheap keeps its fixture and every test in `make check`)."""
    first: dict[str, str] = {}
    files: dict[str, list[str]] = {}
    seconds: dict[tuple[str, str], float] = {}
    for nodeid, when, took, outcome in phases:
        node, path = str(nodeid), str(nodeid).split("::")[0]
        if when == "setup":
            first.setdefault(path, node)
            files.setdefault(path, []).append(node)
        if outcome != "skipped":
            seconds[(node, str(when))] = float(took)  # type: ignore[arg-type]
    heavy = {node for (node, when), took in seconds.items()
             if took > over and (when != "setup" or first[node.split("::")[0]] != node)}
    for nodes in files.values():
        setup = seconds.get((nodes[0], "setup"), 0.0)
        rest = sum(seconds.get((n, w), 0.0) for n in nodes if n not in heavy for w in ("call", "teardown"))
        if setup > over and setup + rest > whole:
            heavy.update(nodes)
    return sorted(heavy)


def write_heavy(record_file: Path) -> int:
    """Rewrite :data:`HEAVY_LIST` from a recorded run of the quick tier; the number of heavy tests."""
    import json

    ids = heavy_from_record(json.loads(record_file.read_text(encoding="utf-8")))
    HEAVY_LIST.write_text(
        "# Quick tests over tests/tiers.py's HEAVY_SECONDS on the stand-ins: `make check` leaves them out,\n"
        "# `make test` runs them. Written by `make tiers` (python -m tests.tiers RECORD.json) from a measured run:\n"
        "# do not edit.\n" + "".join(f"{i}\n" for i in ids), encoding="utf-8")
    return len(ids)


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


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def share_cores(config: pytest.Config) -> int | None:
    """On a pytest-xdist worker: torch's threads (and those of the processes a test starts: commands, app servers)
    set to the worker's share of the cores, else None. Two workers of two threads each on two cores deschedule each
    other's threads at every matrix product's barrier (explorer/runtime/threads.py measured a forward 11x slower on
    a busy 2-core machine); a test that sets its own count (tests/test_threads.py) still can."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return None
    share = max(1, (os.cpu_count() or 1) // max(1, int(workerinput.get("workercount", 1))))
    for name in THREAD_VARIABLES:
        os.environ[name] = str(share)
    import torch

    torch.set_num_threads(share)
    _state["threads"] = share
    return share


def restore_threads() -> None:
    """Give the worker back its share (:func:`share_cores`) after a module that set torch's threads itself (a module
    fixture that computes a reference on two threads): left at two, every later test of the worker oversubscribed
    the cores again (a tiny seq2seq run took 49 s in the quick tier, 1.4 s alone)."""
    share = _state.get("threads")
    if isinstance(share, int) and "torch" in sys.modules:
        import torch

        if torch.get_num_threads() != share:
            torch.set_num_threads(share)


def prepare() -> None:
    """Save the stand-ins at the start of a session that uses them (so no test's setup is charged with them)."""
    if os.environ.get(SWITCH) == "1":
        _stand_ins()


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


if __name__ == "__main__":
    print(f"{write_heavy(Path(sys.argv[1]))} heavy tests written to {HEAVY_LIST}")
