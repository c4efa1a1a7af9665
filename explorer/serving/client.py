"""The HTTP calls to an OpenAI-compatible engine: one pooled connection per endpoint, a bound on the requests
in flight, one deadline over each whole exchange (the request budget at most) and a cap on the bytes read
(:mod:`explorer.serving.wire`), every answer checked against its typed shape before it is read
(:mod:`explorer.serving.answers`), and one clear ExplorerError per way a call can fail.

Engines differ in small ways that bite (seen against real servers): vLLM and llama-cpp-python answer
``/v1/completions`` log-probabilities in the legacy shape (``tokens``, ``token_logprobs``, ``top_logprobs``,
``text_offset``); llama.cpp's own ``llama-server`` answers ``logprobs.content[]``; the first token's
log-probability is null on some and missing on others; a 200 answer does not mean a field was honoured. So
:class:`Completion` is read from either shape and every caller checks what it needs.

A failure never carries the API key, the request body or the server's whole answer: the message names the
endpoint, what went wrong, a short cleaned excerpt of what the server said (:func:`~explorer.serving.errors.excerpt`)
and what to do. A request cut by the page's budget (not by the endpoint's own timeout) is a
:class:`~explorer.runtime.cancel.RequestStopped`, so anytime callers keep what was done before it.
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar, cast

import httpx

from explorer.runtime import cancel
from explorer.serving import answers, completion, wire
from explorer.serving.completion import Completion
from explorer.serving.endpoints import Endpoint
from explorer.serving.errors import ServedError, excerpt

__all__ = ["Completion", "ServedError", "call", "complete", "embeddings", "in_flight", "models", "parallel",
           "parallel_anytime"]

T = TypeVar("T")
A = TypeVar("A")
CONNECT_SECONDS = 5.0  # a server that does not accept the connection in this long is not there
MAX_ANSWER = 64 * 2**20  # bytes of one answer read at most (a runaway server cannot fill the memory)
LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=64)  # all servers together


_LOCK = threading.Lock()
_SHARED: httpx.Client | None = None
_SLOTS: dict[tuple[str, str], threading.BoundedSemaphore] = {}
_BUSY: dict[tuple[str, str], int] = {}


def _client() -> httpx.Client:
    """The one pooled client (made once: building a transport loads the TLS roots, a fraction of a second):
    connections to each server are kept and reused across requests (no handshake per step)."""
    global _SHARED
    with _LOCK:
        if _SHARED is None:
            _SHARED = httpx.Client(transport=wire.transport(LIMITS), follow_redirects=False, trust_env=False)
        return _SHARED


@contextmanager
def _slot(ep: Endpoint, wait: float, budget_bound: bool) -> Iterator[None]:
    """One of the endpoint's ``max_concurrent`` request slots (its own bound: never a local model slot)."""
    key = (ep.name, ep.base_url)
    with _LOCK:
        slots = _SLOTS.setdefault(key, threading.BoundedSemaphore(ep.max_concurrent))
    if not slots.acquire(timeout=max(wait, 0.001)):
        if budget_bound:
            cancel.check()  # the page's time ran out while waiting: stopped, not failed
        raise ServedError(f"{ep.shown} already has {ep.max_concurrent} requests in flight from this server and none "
                          f"finished within {wait:.0f} s: try again in a moment.", "busy")
    with _LOCK:
        _BUSY[key] = _BUSY.get(key, 0) + 1
    try:
        yield
    finally:
        with _LOCK:
            _BUSY[key] -= 1
        slots.release()


def in_flight(ep: Endpoint) -> int:
    """Requests to ``ep`` running now from this process."""
    with _LOCK:
        return _BUSY.get((ep.name, ep.base_url), 0)


def _url(ep: Endpoint, path: str, root: bool) -> str:
    """``/completions`` under the base URL, or ``/version`` at the server's root (``root``)."""
    if not root:
        return ep.base_url + path
    base = ep.base_url.removesuffix("/v1")
    return base + path


def _server_message(raw: bytes) -> str:
    """What the server said, from the usual error shapes, as a short cleaned excerpt on one line."""
    text = raw.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        return excerpt(text)
    if isinstance(body, dict):
        err = body.get("error", body.get("detail", body.get("message", body)))
        if isinstance(err, dict):
            err = err.get("message", err)
        return excerpt(str(err))
    return excerpt(str(body))


def _status_error(ep: Endpoint, code: int, raw: bytes) -> ServedError:
    said = _server_message(raw)
    if code in (401, 403):
        return ServedError(f"{ep.shown} refused the request ({code}): the API key is missing or wrong. Set the "
                           f"variable named by api_key_env{f' ({ep.api_key_env})' if ep.api_key_env else ''}.",
                           "status", code)
    if code == 404 and ep.model and ep.model in said:
        return ServedError(f"{ep.shown} does not serve the model {ep.model!r} (it said: {said}). Use a name from "
                           f"its /v1/models list.", "model", code)
    if code == 404:
        return ServedError(f"{ep.shown} has no such API route ({code}: {said}): check that the base URL ends in /v1 "
                           "and that the server is OpenAI-compatible.", "status", code)
    if 400 <= code < 500:
        return ServedError(f"{ep.shown} refused the request ({code}): {said}", "status", code)
    return ServedError(f"{ep.shown} failed on the request ({code}, a server error): {said}. Try again; if it "
                       "persists, look at the server's own log.", "status", code)


def _json(ep: Endpoint, raw: bytes) -> object:
    """The answer's JSON (NaN and Infinity pass: the shapes judge them), or one ServedError."""
    try:
        return json.loads(raw)
    except RecursionError as err:
        raise ServedError(f"{ep.shown} answered JSON nested too deep to read: is the base URL an OpenAI-compatible "
                          "API?", "garbage") from err
    except ValueError as err:
        said = excerpt(raw[:2000].decode("utf-8", "replace"), 60)
        raise ServedError(f"{ep.shown} answered with something that is not JSON ({said!r}): is the base URL an "
                          "OpenAI-compatible API?", "garbage") from err


def _send(ep: Endpoint, method: str, path: str, body: Mapping[str, object] | None, root: bool, wait: float,
          budget_bound: bool) -> tuple[int, bytes]:
    """One exchange within ``wait`` seconds, its failures in words."""
    headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
    if (key := ep.api_key()) is not None:
        headers["Authorization"] = f"Bearer {key}"
    try:
        return wire.exchange(_client(), method, _url(ep, path, root), body=body, headers=headers, wait=wait,
                             connect=CONNECT_SECONDS, cap=MAX_ANSWER, who=ep.shown)
    except httpx.ConnectTimeout as err:
        raise ServedError(f"{ep.shown} at {ep.host} did not accept a connection within "
                          f"{min(CONNECT_SECONDS, wait):.0f} s: is the address right and the server up?",
                          "refused") from err
    except httpx.ConnectError as err:
        raise ServedError(f"Cannot reach {ep.shown} at {ep.host}: the connection was refused. Start the server, "
                          "or check the base URL (README: 'When your model outgrows this machine').",
                          "refused") from err
    except httpx.TimeoutException as err:
        if budget_bound:
            cancel.check()  # the page's time ran out: stopped (anytime callers keep what they have)
        raise ServedError(f"{ep.shown} did not answer within {wait:.1f} s: ask for less (fewer tokens, a shorter "
                          "text), or raise the endpoint's timeout.", "timeout") from err
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as err:
        raise ServedError(f"{ep.shown} closed the connection in the middle of the request (it may have stopped "
                          "or restarted): try again once it is back.", "dropped") from err
    except httpx.HTTPError as err:
        raise ServedError(f"The request to {ep.shown} failed ({type(err).__name__}): try again.",
                          "dropped") from err


def call(ep: Endpoint, method: str, path: str, body: Mapping[str, object] | None = None, *, root: bool = False,
         timeout: float | None = None) -> object:
    """One request, its JSON answer, or a :class:`ServedError` that says what happened and what to do. The whole
    exchange (waiting for a slot included) ends within the endpoint's timeout, ``timeout`` and the request's
    budget, whichever is first."""
    cancel.check()
    left = cancel.seconds_left()  # inside a page request: never wait past its budget
    wait = min(t for t in (ep.timeout, timeout, left) if t is not None)
    budget_bound = left is not None and left <= wait
    if wait <= 0:
        cancel.check()
    began = time.monotonic()
    with _slot(ep, wait, budget_bound):
        status, raw = _send(ep, method, path, body, root, max(0.001, wait - (time.monotonic() - began)),
                            budget_bound)
    cancel.check()
    if status >= 400:
        raise _status_error(ep, status, raw)
    return _json(ep, raw)


def complete(ep: Endpoint, prompt: str, *, max_tokens: int, logprobs: int | None = None, echo: bool = False,
             temperature: float = 0.0, seed: int | None = None, extra: Mapping[str, object] | None = None,
             timeout: float | None = None) -> Completion:
    """``POST /v1/completions`` for one prompt. ``extra``: engine-specific fields (vLLM's ``prompt_logprobs``,
    llama.cpp's ``top_k``...), sent as they are."""
    body: dict[str, object] = {"prompt": prompt, "max_tokens": max_tokens, "temperature": temperature, "stream": False}
    if ep.model:
        body["model"] = ep.model
    if logprobs is not None:
        body["logprobs"] = logprobs
    if echo:
        body["echo"] = True
    if seed is not None:
        body["seed"] = seed
    body.update(extra or {})
    return completion.parse(ep, call(ep, "POST", "/completions", body, timeout=timeout))


def models(ep: Endpoint, timeout: float | None = None) -> list[answers.Listed]:
    """``GET /v1/models``: the models the server lists (each with its ``id``)."""
    return list(answers.read(ep, answers.ModelList, call(ep, "GET", "/models", timeout=timeout), "/v1/models").data)


def _vector(ep: Endpoint, row: answers.Row, i: int) -> list[float]:
    """Row ``i``'s vector; token vectors (a pooling-``none`` model) averaged."""
    if row.embedding and isinstance(row.embedding[0], list):
        tokens = row.embedding
        if len(widths := {len(v) for v in tokens}) != 1 or 0 in widths:
            raise ServedError(f"{ep.shown} answered data[{i}].embedding as token vectors of unequal sizes "
                              f"({', '.join(map(str, sorted(widths)[:4]))} numbers).", "garbage")
        return [sum(col) / len(tokens) for col in zip(*tokens, strict=True)]
    if not row.embedding:
        raise ServedError(f"{ep.shown} answered data[{i}].embedding empty.", "garbage")
    return [float(v) for v in cast("list[float]", row.embedding)]


def embeddings(ep: Endpoint, texts: list[str], timeout: float | None = None) -> list[list[float]]:
    """``POST /v1/embeddings``: one vector per text, in the texts' order, all of one size (else a ServedError
    naming what is wrong: the count, the numbering, a field, the sizes)."""
    body: dict[str, object] = {"input": texts}
    if ep.model:
        body["model"] = ep.model
    rows = answers.read(ep, answers.Embeddings, call(ep, "POST", "/embeddings", body, timeout=timeout),
                        "/v1/embeddings").data
    if len(rows) != len(texts):
        raise ServedError(f"{ep.shown} answered {len(rows)} embeddings for {len(texts)} texts.", "garbage")
    numbers = [r.index for r in rows]
    if any(n is not None for n in numbers):
        if sorted(n if n is not None else -1 for n in numbers) != list(range(len(rows))):
            raise ServedError(f"{ep.shown} numbered its {len(rows)} embeddings with data[].index values other than "
                              f"0 to {len(rows) - 1}.", "garbage")
        rows = sorted(rows, key=lambda r: r.index or 0)
    out = [_vector(ep, row, i) for i, row in enumerate(rows)]
    if len(sizes := {len(v) for v in out}) > 1:
        raise ServedError(f"{ep.shown} answered embeddings of different sizes for one list "
                          f"({', '.join(map(str, sorted(sizes)[:4]))} numbers).", "garbage")
    return out


def _run(ep: Endpoint, fn: Callable[[A], T], items: Sequence[A]) -> tuple[list, list[BaseException | None]]:
    """Each item's result or exception, in order: at most ``ep.max_concurrent`` at once, each thread in this
    request's context (its budget and stop checks apply there too). After a failure other than the budget's
    end, the jobs not started yet are dropped."""
    results: list = [None] * len(items)
    errors: list[BaseException | None] = [None] * len(items)
    with ThreadPoolExecutor(max(1, min(len(items), ep.max_concurrent))) as pool:
        jobs = [pool.submit(contextvars.copy_context().run, fn, item) for item in items]
        for i, job in enumerate(jobs):
            try:
                results[i] = job.result()
            except BaseException as err:  # noqa: BLE001  (handed to the caller, who raises it)
                errors[i] = err
                if not isinstance(err, cancel.RequestStopped):
                    for later in jobs[i + 1:]:
                        later.cancel()
    return results, errors


def parallel(ep: Endpoint, fn: Callable[[A], T], items: Sequence[A]) -> list[T]:
    """``fn(item)`` for every item, in order, requests to ``ep`` in parallel (:func:`_run`). The first failure is
    raised."""
    if len(items) <= 1:
        return [fn(item) for item in items]
    results, errors = _run(ep, fn, items)
    if (first := next((e for e in errors if e is not None), None)) is not None:
        raise first
    return results


def parallel_anytime(ep: Endpoint, fn: Callable[[A], T], items: Sequence[A],
                     ) -> tuple[list[T | None], cancel.RequestStopped | None]:
    """:func:`parallel`, but when the request's time runs out the results so far are kept: each item's result or
    None (not done), and why it stopped (None: all done). Every other failure, or a request nobody waits for any
    more, is raised."""
    results, errors = _run(ep, fn, items)
    failed = [e for e in errors if e is not None]
    other = next((e for e in failed if not isinstance(e, cancel.RequestStopped) or e.reason == "gone"), None)
    if other is not None:
        raise other
    stopped = next((e for e in failed if isinstance(e, cancel.RequestStopped)), None)
    return results, stopped
