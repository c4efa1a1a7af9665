"""The process where t-SNE and UMAP run, so that a crash in their native code costs one request, not the server.

scikit-learn's Barnes-Hut t-SNE and umap-learn's numba code are native: a bad input that slips past the checks of
:mod:`~explorer.evaluation.projection` can end the process with a signal (a SIGSEGV), which no ``try`` catches, and
in the app that process is the server of every visitor. :func:`run` calls a function in one long-lived worker
process instead, made at the first call, so its imports and umap-learn's compiled functions are paid once, not per
request. When the worker dies the caller gets an ExplorerError that says so, and the next call starts a fresh one.

The worker is a plain ``python -c`` child reading pickled jobs on its stdin and answering on a copy of its stdout
(its own stdout goes to stderr, so a library's prints cannot garble an answer). Not ``multiprocessing``: its
``spawn`` and ``forkserver`` starts run the parent's main script again in the child, which breaks any script that
calls the projector without an ``if __name__ == "__main__"`` guard. The child imports with the parent's
``sys.path``; it ends when its stdin closes (the parent exited or dropped it).

One job at a time (a lock): a crash or a stop then ends only the job that caused it. While a job runs, the caller
checks its request's budget every :data:`POLL` seconds (:func:`explorer.runtime.cancel.check`); a request that must
stop kills the worker (a native call cannot be interrupted otherwise), so the budget holds in the middle of a
layout too. Outside a request (the command line, tests) it waits as long as the job takes. The worker's memory is
not counted in the request's memory budget (only the server process's is).

>>> import math
>>> run(math.hypot, 3.0, 4.0, what="a test")
5.0
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import IO, Any, TypeVar, cast

from explorer.core.errors import ExplorerError
from explorer.runtime import cancel

__all__ = ["POLL", "run", "serve"]

POLL = 0.25  # seconds between two looks at the request's budget while the worker computes
T = TypeVar("T")
_BOOT = "from explorer.evaluation.layoutworker import serve; serve()"
_JOB = threading.Lock()  # one job in the worker at a time
_WORKER: list[subprocess.Popen[bytes]] = []  # the worker, once started (a list: no global statement)


class _Died(Exception):
    """The worker's answer pipe closed before an answer: it died."""


def serve() -> None:
    """The worker's loop: a pickled ``(fn, args)`` in, ``(True, result)`` or ``(False, exception)`` out, until EOF."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a library's prints go to stderr, not into an answer
    jobs = sys.stdin.buffer
    while True:
        try:
            fn, args = pickle.load(jobs)
        except EOFError:
            return
        try:
            answer: tuple[bool, object] = (True, fn(*args))
        except Exception as err:  # sent back to the caller, who raises it
            answer = (False, err)
        try:
            blob = pickle.dumps(answer)
        except Exception as err:  # an answer that cannot be pickled: said in words
            blob = pickle.dumps((False, ExplorerError(f"The worker's answer could not be sent back ({err}).")))
        answers.write(blob)
        answers.flush()


def _start() -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # import what the parent imports
    return subprocess.Popen([sys.executable, "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)


def _worker() -> subprocess.Popen[bytes]:
    if _WORKER and _WORKER[0].poll() is not None:  # died between two jobs
        _WORKER.clear()
    if not _WORKER:
        _WORKER.append(_start())
    return _WORKER[0]


def _drop(proc: subprocess.Popen[bytes]) -> int | None:
    """Kill and forget ``proc`` (already dead after a crash; stopped mid-job otherwise); its exit status."""
    if _WORKER and _WORKER[0] is proc:
        _WORKER.clear()
    if proc.poll() is None:
        proc.kill()
    try:
        return proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        return None


def _how(code: int | None) -> str:
    if code is None or code >= 0:
        return "ended abruptly" if code is None else f"exited with status {code}"
    try:
        return f"was killed by signal {signal.Signals(-code).name}"
    except ValueError:
        return f"was killed by signal {-code}"


def _read(pipe: IO[bytes], answer: Future[tuple[bool, object]]) -> None:
    """The reader thread: the one answer of a job, or :class:`_Died` at EOF."""
    try:
        answer.set_result(pickle.load(pipe))
    except EOFError:
        answer.set_exception(_Died())
    except Exception as err:  # a garbled answer
        answer.set_exception(err)


def _send(proc: subprocess.Popen[bytes], fn: Callable[..., object], args: tuple[object, ...]) -> Future[Any]:
    answer: Future[tuple[bool, object]] = Future()
    threading.Thread(target=_read, args=(proc.stdout, answer), daemon=True, name="layout-worker-answer").start()
    stdin = cast(IO[bytes], proc.stdin)
    try:
        stdin.write(pickle.dumps((fn, args)))
        stdin.flush()
    except (BrokenPipeError, OSError):  # it died as the job was sent: the reader sees EOF
        pass
    return answer


def _wait(answer: Future[tuple[bool, object]]) -> tuple[bool, object]:
    while True:
        try:
            return answer.result(timeout=POLL)
        except FutureTimeout:
            cancel.check()  # raises when the request must stop


def _lock() -> None:
    """Take the one job's turn, the request's budget checked while another job holds it."""
    while not _JOB.acquire(timeout=POLL):
        cancel.check()


def run(fn: Callable[..., T], *args: object, what: str) -> T:
    """``fn(*args)`` computed in the worker process (``fn`` importable by name and ``args`` picklable; ``what``: the
    work, in words, for the message if the worker dies). An exception ``fn`` raises is raised here as itself."""
    _lock()
    try:
        proc = _worker()
        try:
            ok, value = _wait(_send(proc, fn, args))
        except _Died:
            raise ExplorerError(f"The process computing {what} {_how(_drop(proc))}: a crash inside the native "
                                "library. Only this request was lost (the next one starts a fresh process): try "
                                "another method (PCA runs without it), another seed, or different texts.") from None
        except BaseException:  # stopped by the request's budget or interrupted: the job cannot be cut short else
            _drop(proc)
            raise
        if not ok:
            raise cast(BaseException, value)
        return cast(T, value)
    finally:
        _JOB.release()
