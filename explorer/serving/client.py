"""The HTTP calls to an OpenAI-compatible engine: one pooled connection per endpoint, a bound on the requests
in flight, the request budget as the timeout, and one clear ExplorerError per way a call can fail.

Engines differ in small ways that bite (seen against real servers): vLLM and llama-cpp-python answer
``/v1/completions`` log-probabilities in the legacy shape (``tokens``, ``token_logprobs``, ``top_logprobs``,
``text_offset``); llama.cpp's own ``llama-server`` answers ``logprobs.content[]``; the first token's
log-probability is null on some and missing on others; a 200 answer does not mean a field was honoured. So
:class:`Completion` is read from either shape and every caller checks what it needs.

A failure never carries the API key, the request body or the server's whole answer: the message names the
endpoint, what went wrong, and what to do.
"""

from __future__ import annotations

import contextvars
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from explorer.core.errors import ExplorerError, shorten
from explorer.runtime import cancel
from explorer.serving.endpoints import Endpoint

__all__ = ["Completion", "ServedError", "call", "complete", "embeddings", "in_flight", "models", "parallel"]

T = TypeVar("T")
A = TypeVar("A")
CONNECT_SECONDS = 5.0  # a server that does not accept the connection in this long is not there
MAX_ANSWER = 64 * 2**20  # bytes of one answer read at most (a runaway server cannot fill the memory)


class ServedError(ExplorerError):
    """A served call that failed; ``kind`` says how ("refused", "timeout", "dropped", "status", "garbage",
    "model", "busy", "missing")."""

    def __init__(self, message: str, kind: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind, self.status = kind, status


@dataclass(frozen=True)
class Completion:
    """One choice of a ``/v1/completions`` answer, with its per-token log-probabilities when asked."""

    text: str
    tokens: tuple[str, ...]  # the tokens the log-probabilities are about (prompt ones too with echo)
    token_logprobs: tuple[float | None, ...]  # each token's own log-probability (None: not given)
    top_logprobs: tuple[tuple[tuple[str, float], ...], ...]  # per token: (token, log-probability), best first
    text_offset: tuple[int, ...]  # each token's start in the text the server returned
    finish_reason: str | None
    prompt_tokens: int | None  # usage.prompt_tokens, when the server says


_LOCK = threading.Lock()
_CLIENTS: dict[tuple[str, float], httpx.Client] = {}
_SLOTS: dict[tuple[str, str], threading.BoundedSemaphore] = {}
_BUSY: dict[tuple[str, str], int] = {}


def _client(ep: Endpoint) -> httpx.Client:
    """One pooled client per base URL: connections are reused across requests (no handshake per step)."""
    key = (ep.base_url, ep.timeout)
    with _LOCK:
        if key not in _CLIENTS:
            _CLIENTS[key] = httpx.Client(timeout=httpx.Timeout(ep.timeout, connect=CONNECT_SECONDS),
                                         limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
                                         follow_redirects=False, trust_env=False)
        return _CLIENTS[key]


@contextmanager
def _slot(ep: Endpoint, wait: float) -> Iterator[None]:
    """One of the endpoint's ``max_concurrent`` request slots (its own bound: never a local model slot)."""
    key = (ep.name, ep.base_url)
    with _LOCK:
        slots = _SLOTS.setdefault(key, threading.BoundedSemaphore(ep.max_concurrent))
    if not slots.acquire(timeout=max(wait, 0.001)):
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


def _timeout(ep: Endpoint) -> float:
    left = cancel.seconds_left()  # inside a page request: never wait past its budget
    if left is not None and left <= 0:
        cancel.check()
    return min(ep.timeout, left) if left is not None else ep.timeout


def _server_message(response: httpx.Response) -> str:
    """What the server said, from the usual error shapes, cut and on one line."""
    try:
        body = response.json()
    except ValueError:
        return shorten(" ".join(response.text.split()), 160)
    if isinstance(body, dict):
        err = body.get("error", body.get("detail", body.get("message", body)))
        if isinstance(err, dict):
            err = err.get("message", err)
        return shorten(" ".join(str(err).split()), 160)
    return shorten(str(body), 160)


def _status_error(ep: Endpoint, response: httpx.Response) -> ServedError:
    said, code = _server_message(response), response.status_code
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


def call(ep: Endpoint, method: str, path: str, body: Mapping[str, object] | None = None, *, root: bool = False,
         timeout: float | None = None) -> Any:
    """One request, its JSON answer, or a :class:`ServedError` that says what happened and what to do."""
    cancel.check()
    wait = _timeout(ep) if timeout is None else min(timeout, _timeout(ep))
    headers = {"Accept": "application/json"}
    if (key := ep.api_key()) is not None:
        headers["Authorization"] = f"Bearer {key}"
    with _slot(ep, wait):
        try:
            response = _client(ep).request(method, _url(ep, path, root), json=body, headers=headers,
                                           timeout=httpx.Timeout(wait, connect=min(CONNECT_SECONDS, wait)))
        except httpx.ConnectTimeout as err:
            raise ServedError(f"{ep.shown} at {ep.host} did not accept a connection within {CONNECT_SECONDS:.0f} s: "
                              "is the address right and the server up?", "refused") from err
        except httpx.ConnectError as err:
            raise ServedError(f"Cannot reach {ep.shown} at {ep.host}: the connection was refused. Start the server, "
                              "or check the base URL (README: 'When your model outgrows this machine').",
                              "refused") from err
        except httpx.TimeoutException as err:
            raise ServedError(f"{ep.shown} did not answer within {wait:.1f} s: ask for less (fewer tokens, a shorter "
                              "text), or raise the endpoint's timeout.", "timeout") from err
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as err:
            raise ServedError(f"{ep.shown} closed the connection in the middle of the request (it may have stopped "
                              "or restarted): try again once it is back.", "dropped") from err
        except httpx.HTTPError as err:
            raise ServedError(f"The request to {ep.shown} failed ({type(err).__name__}): try again.",
                              "dropped") from err
    cancel.check()
    if response.status_code >= 400:
        raise _status_error(ep, response)
    if len(response.content) > MAX_ANSWER:
        raise ServedError(f"{ep.shown} answered {len(response.content) / 2**20:.0f} MB, more than this explorer reads "
                          "from one answer: ask for less.", "garbage")
    try:
        return response.json()
    except ValueError as err:
        raise ServedError(f"{ep.shown} answered with something that is not JSON ({shorten(response.text, 60)!r}): is "
                          "the base URL an OpenAI-compatible API?", "garbage") from err


def _field(ep: Endpoint, data: Any, *path: str | int) -> Any:
    """``data[path...]``, or a ServedError naming the missing field."""
    here = data
    for part in path:
        try:
            here = here[part]
        except (KeyError, IndexError, TypeError) as err:
            where = "".join(f"[{p!r}]" if isinstance(p, str) else f"[{p}]" for p in path)
            raise ServedError(f"{ep.shown} answered without {where}: it may not be OpenAI-compatible for this "
                              "request.", "garbage") from err
    return here


def _logprob(value: Any) -> float | None:
    """A finite log-probability, else None (null, a string, NaN, or -inf for a token the server rules out)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _legacy(lp: Mapping[str, Any]) -> tuple[tuple, tuple, tuple, tuple]:
    tokens = tuple(str(t) for t in lp.get("tokens") or ())
    own = tuple(_logprob(v) for v in lp.get("token_logprobs") or ())
    tops = []
    for entry in lp.get("top_logprobs") or ():
        found = [(str(t), _logprob(raw)) for t, raw in entry.items()] if isinstance(entry, dict) else []
        pairs = [(t, v) for t, v in found if v is not None]
        tops.append(tuple(sorted(pairs, key=lambda p: -p[1])))
    offsets = tuple(int(o) for o in lp.get("text_offset") or ())
    return tokens, own, tuple(tops), offsets


def _content(items: list[Any]) -> tuple[tuple, tuple, tuple, tuple]:
    """llama.cpp's ``logprobs.content[]``: {token, logprob, top_logprobs: [{token, logprob}]}."""
    tokens, own, tops, offsets, at = [], [], [], [], 0
    for item in items:
        token = str(item.get("token", ""))
        tokens.append(token)
        own.append(_logprob(item.get("logprob")))
        pairs = [(str(t.get("token", "")), v) for t in item.get("top_logprobs") or ()
                 if isinstance(t, dict) and (v := _logprob(t.get("logprob"))) is not None]
        tops.append(tuple(sorted(pairs, key=lambda p: -p[1])))
        offsets.append(at)
        at += len(token)
    return tuple(tokens), tuple(own), tuple(tops), tuple(offsets)


def _in_text(tokens: tuple[str, ...], offsets: tuple[int, ...], text: str) -> tuple[int, ...]:
    """Offsets into the text the server returned. vLLM counts the characters of a leading ``<bos>`` it echoes
    (tokens ``<bos>``, ``The``; offsets 0, 5) that the text itself lacks, so every offset is 5 too far (seen
    against vLLM 0.32; llama-cpp-python renders ``<bos>`` as ""). The shift is what the tokens hold beyond the
    text, when they end with it.

    >>> _in_text(("<bos>", "The", " cat"), (0, 5, 8), "The cat")
    (0, 0, 3)
    >>> _in_text(("", "The", " cat"), (0, 0, 3), "The cat")
    (0, 0, 3)
    """
    joined = "".join(tokens)
    shift = len(joined) - len(text)
    if shift <= 0 or not offsets or not joined.endswith(text):
        return offsets
    return tuple(max(0, o - shift) for o in offsets)


def parse_completion(ep: Endpoint, data: Any) -> Completion:
    """The first choice of a completions answer, from either log-probability shape."""
    choice = _field(ep, data, "choices", 0)
    text = choice.get("text") if isinstance(choice, dict) else None
    if not isinstance(text, str):
        raise ServedError(f"{ep.shown} answered a completion without text: it may not be OpenAI-compatible.",
                          "garbage")
    lp = choice.get("logprobs")
    parts: tuple[tuple, tuple, tuple, tuple] = ((), (), (), ())
    if isinstance(lp, dict) and isinstance(lp.get("content"), list):
        parts = _content(lp["content"])
    elif isinstance(lp, dict):
        parts = _legacy(lp)
    parts = (parts[0], parts[1], parts[2], _in_text(parts[0], parts[3], text))
    usage = data.get("usage") if isinstance(data, dict) else None
    prompt_tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return Completion(text, *parts, choice.get("finish_reason"),
                      int(prompt_tokens) if isinstance(prompt_tokens, int) else None)


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
    return parse_completion(ep, call(ep, "POST", "/completions", body, timeout=timeout))


def models(ep: Endpoint, timeout: float | None = None) -> list[dict[str, Any]]:
    """``GET /v1/models``: the models the server lists (each a dict with at least ``id``)."""
    data = _field(ep, call(ep, "GET", "/models", timeout=timeout), "data")
    if not isinstance(data, list):
        raise ServedError(f"{ep.shown} listed its models in an unexpected shape: is it OpenAI-compatible?", "garbage")
    return [m for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]


def embeddings(ep: Endpoint, texts: list[str], timeout: float | None = None) -> list[list[float]]:
    """``POST /v1/embeddings``: one vector per text, in the texts' order."""
    body: dict[str, object] = {"input": texts}
    if ep.model:
        body["model"] = ep.model
    rows = _field(ep, call(ep, "POST", "/embeddings", body, timeout=timeout), "data")
    if not isinstance(rows, list) or len(rows) != len(texts):
        raise ServedError(f"{ep.shown} answered {len(rows) if isinstance(rows, list) else 'no'} embeddings for "
                          f"{len(texts)} texts.", "garbage")
    ordered = sorted(rows, key=lambda r: r.get("index", 0) if isinstance(r, dict) else 0)
    out = []
    for row in ordered:
        vector = row.get("embedding") if isinstance(row, dict) else None
        if isinstance(vector, list) and vector and isinstance(vector[0], list):  # token embeddings: mean-pool
            vector = [sum(col) / len(vector) for col in zip(*vector, strict=True)]
        if not isinstance(vector, list) or not vector or not all(isinstance(v, int | float) for v in vector):
            raise ServedError(f"{ep.shown} answered an embedding that is not a list of numbers.", "garbage")
        out.append([float(v) for v in vector])
    return out


def parallel(ep: Endpoint, fn: Callable[[A], T], items: Sequence[A]) -> list[T]:
    """``fn(item)`` for every item, in order: requests to ``ep`` in parallel, at most ``ep.max_concurrent`` at once,
    each thread in this request's context (its budget and stop checks apply there too). The first failure is
    raised and the jobs not started yet are dropped."""
    if len(items) <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(min(len(items), ep.max_concurrent)) as pool:
        jobs = [pool.submit(contextvars.copy_context().run, fn, item) for item in items]
        try:
            return [job.result() for job in jobs]
        except BaseException:
            for job in jobs:
                job.cancel()
            raise
