"""A misbehaving OpenAI-compatible engine of the test suite's own, on 127.0.0.1: a real HTTP server (the standard
library's) that answers like an engine until told to misbehave in one named way (:data:`FAULTS`).

Well-behaved, it is a tiny deterministic "model": words are tokens, the next token comes from a fixed list of
twenty with fixed log-probabilities, ``echo`` scores the prompt's own words, embeddings are 8 numbers from a
hash of the text, and the llama-cpp-python tokenize routes answer. So the explorer's probe finds every capability,
and the pages and commands reach the faulty answer itself. With ``spare_probe`` (the default) the probe's own
requests (its text, :data:`explorer.serving.probe.PROBE_TEXT`, and the embeddings batch check) are answered well
and everything else gets the fault; without it every request does.

Faults: wrong field types in completions (``logprobs-number``, ``top-logprobs-number``, ``content-number``,
``text-number``, ``choices-number``, ``offset-huge``, ``logprob-huge``, ``logprob-floor``: every echoed token
-1e308, a legal number whose sum over two tokens is -inf), in embeddings (``ragged``, ``count``,
``nan-embedding``, ``embedding-strings``) and tokenization (``ids-infinity``); and on the wire: ``drip`` (the
whole answer, status line included, one byte every ``drip_s``), ``endless`` (a chunked 200 that goes on for
``endless_mb``), ``traceback`` (a 500 whose body is the engine's traceback with its file paths), ``nested`` (JSON
nested 100,000 levels), ``slow`` (every completion and embedding after ``drip_s`` seconds, as a CPU engine),
``hang`` (a completion is held until the engine is closed, then its connection drops unanswered: a server
stopped mid-request, at the moment the test chooses rather than when the machine's speed says).
:attr:`HostileEngine.sent` counts the bytes written, so a test sees where a client hung up.

    with HostileEngine("ragged") as engine:
        embedding.embed(engine.endpoint, ["a", "b"])   # one ExplorerError naming the field
"""

from __future__ import annotations

import hashlib
import http.server
import json
import math
import re
import threading
import time
from typing import Any

from explorer.serving.embedding import CHECK_TEXT
from explorer.serving.endpoints import Endpoint
from explorer.serving.probe import PROBE_TEXT

__all__ = ["FAULTS", "HostileEngine", "TRACEBACK"]

WORDS = [" Paris", " the", " a", " France", " known", " not", " one", " home", " in", " famous", " big", " old",
         " also", " very", " still", " now", " called", " located", " where", " full"]
_SCORES = [-0.4 * i for i in range(len(WORDS))]
_NORM = math.log(sum(math.exp(s) for s in _SCORES))
LOGPROBS = [s - _NORM for s in _SCORES]  # a proper distribution over the twenty words, best first
SECRET_PATH = "/srv/engine-secrets/deploy/key-material"
TRACEBACK = ("Traceback (most recent call last):\n"
             '  File "/opt/engine/lib/python3.11/site-packages/engine/server/app.py", line 412, in completions\n'
             "    result = await model.generate(request)\n"
             f'  File "{SECRET_PATH}/worker.py", line 88, in generate\n'
             "    raise RuntimeError(msg)\n"
             "RuntimeError: CUDA out of memory while allocating the KV cache")
FAULTS = ("logprobs-number", "top-logprobs-number", "content-number", "text-number", "choices-number", "offset-huge",
          "logprob-huge", "logprob-floor", "ragged", "count", "nan-embedding", "embedding-strings", "ids-infinity",
          "drip", "endless", "traceback", "nested", "slow", "no-echo", "hang")


def _words(text: str) -> list[str]:
    return re.findall(r"\s*\S+|\s+", text)


def _vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [b / 127.5 - 1.0 for b in digest[:8]]


class _State:
    def __init__(self, fault: str | None, spare_probe: bool, drip_s: float, endless_mb: int, model: str) -> None:
        self.fault, self.spare_probe, self.drip_s, self.endless_mb = fault, spare_probe, drip_s, endless_mb
        self.model = model
        self.lock = threading.Lock()
        self.sent = 0
        self.requests: list[tuple[str, str, Any]] = []
        self.ids: dict[str, int] = {}
        self.stop = threading.Event()

    def token_id(self, piece: str) -> int:
        with self.lock:
            return self.ids.setdefault(piece, len(self.ids) + 1)

    def piece(self, token: int) -> str:
        with self.lock:
            return next((p for p, i in self.ids.items() if i == token), "")


def _top(k: int) -> dict[str, float]:
    return dict(zip(WORDS[:max(1, k)], LOGPROBS[:max(1, k)], strict=False))


def completion(body: dict[str, Any]) -> dict[str, Any]:
    """A well-formed legacy-shape ``/v1/completions`` answer for ``body``."""
    prompt, k, echo = str(body.get("prompt", "")), body.get("logprobs"), bool(body.get("echo"))
    made = [WORDS[i % 4] for i in range(max(1, int(body.get("max_tokens", 1))))]
    text = (prompt if echo else "") + "".join(made)
    tokens, own, tops = [], [], []
    if echo:
        for i, word in enumerate(_words(prompt)):
            tokens.append(word)
            own.append(None if i == 0 else -2.0 - 0.01 * len(word))
            tops.append(None if i == 0 else {word: own[-1]})
    for word in made:
        tokens.append(word)
        own.append(LOGPROBS[WORDS.index(word)])
        tops.append(_top(int(k or 1)))
    offsets, at = [], 0
    for word in tokens:
        offsets.append(at)
        at += len(word)
    logprobs = None if k is None else {"tokens": tokens, "token_logprobs": own, "top_logprobs": tops,
                                       "text_offset": offsets}
    return {"id": "cmpl-hostile", "object": "text_completion", "model": "hostile",
            "choices": [{"index": 0, "text": text, "logprobs": logprobs, "finish_reason": "length"}],
            "usage": {"prompt_tokens": len(_words(prompt)), "completion_tokens": len(made)}}


def _completion_fault(fault: str, answer: dict[str, Any]) -> dict[str, Any]:
    choice = answer["choices"][0]
    lp = choice["logprobs"] or {"tokens": [" x"], "token_logprobs": [-1.0], "top_logprobs": [{" x": -1.0}],
                                "text_offset": [0]}
    if fault == "logprobs-number":
        choice["logprobs"] = 3
    elif fault == "top-logprobs-number":
        choice["logprobs"] = {**lp, "top_logprobs": 7}
    elif fault == "content-number":
        choice["logprobs"] = {"content": [1, 2]}
    elif fault == "text-number":
        choice["text"] = 5
    elif fault == "choices-number":
        answer["choices"] = 5
    elif fault == "offset-huge":
        choice["logprobs"] = {**lp, "text_offset": [1e308] * len(lp["text_offset"])}
    elif fault == "logprob-floor":
        choice["logprobs"] = {**lp, "token_logprobs": [None, *[-1e308] * (len(lp["token_logprobs"]) - 1)],
                              "top_logprobs": [None, *[{" Paris": -1e308}] * (len(lp["top_logprobs"]) - 1)]}
    elif fault == "logprob-huge":
        choice["logprobs"] = {**lp, "token_logprobs": [1e308] * len(lp["token_logprobs"]),
                              "top_logprobs": [{" Paris": 1e308, " x": 1e300}] * len(lp["top_logprobs"])}
    return answer


def _embeddings(texts: list[str], fault: str | None) -> dict[str, Any]:
    vectors = [_vector(t) for t in texts]
    if fault == "ragged":
        if len(vectors) == 1:  # one text: token vectors of unequal widths
            return {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [[0.5] * 8, [1.0]]}]}
        vectors = [v[: 8 - 3 * (i % 2)] for i, v in enumerate(vectors)]
    elif fault == "count":
        vectors = vectors[:-1] if len(vectors) > 1 else vectors * 2
    elif fault == "nan-embedding":
        vectors = [[float("nan"), *v[1:]] for v in vectors]
    elif fault == "embedding-strings":
        vectors = [[str(x) for x in v] for v in vectors]
    return {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": v}
                                       for i, v in enumerate(vectors)]}


class _HungUp(Exception):
    """The ``hang`` fault's end: the connection closes with no answer written."""


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: object) -> None:  # quiet: the tests read state, not logs
        pass

    @property
    def state(self) -> _State:
        return self.server.state

    def _body(self) -> Any:
        size = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(size) if size else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def _spared(self, path: str, body: Any) -> bool:
        if not self.state.spare_probe:
            return False
        if path in ("/v1/models", "/openapi.json", "/version"):
            return True
        if not isinstance(body, dict):
            return False
        return body.get("prompt") == PROBE_TEXT or body.get("input") in ([PROBE_TEXT], [CHECK_TEXT, CHECK_TEXT],
                                                                          PROBE_TEXT)

    def _write(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()
        with self.state.lock:
            self.state.sent += len(data)

    def _send(self, status: int, payload: bytes, kind: str = "application/json") -> None:
        head = (f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\nContent-Type: {kind}\r\n"
                f"Content-Length: {len(payload)}\r\n\r\n").encode()
        whole = head + payload
        if self.state.fault == "drip" and not self._spare_now:
            for i in range(len(whole)):
                if self.state.stop.is_set():
                    return
                self._write(whole[i:i + 1])
                time.sleep(self.state.drip_s)
            return
        self._write(whole)

    def _endless(self) -> None:
        self._write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b" " * 2**20
        for _ in range(self.state.endless_mb):
            if self.state.stop.is_set():
                return
            self._write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self._write(b"0\r\n\r\n")

    def _answer(self, path: str, body: Any) -> tuple[int, Any]:
        fault = None if self._spare_now else self.state.fault
        if path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": self.state.model, "object": "model", "owned_by": "tests"}]}
        if path == "/openapi.json":
            return 200, {"info": {"title": "hostile test engine", "version": "1"}}
        if not isinstance(body, dict):
            return 400, {"error": {"message": "the body must be a JSON object"}}
        if path == "/v1/completions":
            if fault == "no-echo":  # as llama.cpp's own llama-server: echo ignored, no prompt log-probabilities
                return 200, completion({**body, "echo": False})
            if fault == "slow":
                self.state.stop.wait(self.state.drip_s)
                return 200, completion(body)
            if fault == "hang":
                self.state.stop.wait()
                raise _HungUp
            return 200, _completion_fault(fault, completion(body)) if fault else completion(body)
        if path == "/v1/embeddings":
            if fault == "slow":
                self.state.stop.wait(self.state.drip_s)
            texts = body.get("input")
            return 200, _embeddings([texts] if isinstance(texts, str) else list(texts or []), fault)
        if path == "/extras/tokenize":
            ids = [self.state.token_id(w) for w in _words(str(body.get("input", "")))]
            return 200, {"tokens": [{"id": math.inf} for _ in ids] if fault == "ids-infinity" else ids}
        if path == "/extras/detokenize":
            return 200, {"text": "".join(self.state.piece(int(t)) for t in body.get("tokens", []))}
        return 404, {"detail": "Not Found"}

    def _handle(self, method: str) -> None:
        path = self.path.split("?", 1)[0]
        body = self._body() if method == "POST" else None
        with self.state.lock:
            self.state.requests.append((method, self.path, body))
        self._spare_now = self._spared(path, body)
        fault = None if self._spare_now else self.state.fault
        try:
            if fault == "endless":
                return self._endless()
            if fault == "traceback":
                return self._send(500, TRACEBACK.encode(), "text/plain")
            if fault == "nested":
                return self._send(200, b"[" * 100_000 + b"]" * 100_000)
            status, answer = self._answer(path, body)
            self._send(status, json.dumps(answer).encode())
        except (BrokenPipeError, ConnectionResetError, _HungUp):  # the client (or we) hung up: what a test looks for
            self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802  (the standard library's name)
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    state: _State


class HostileEngine:
    """The server, started on a free port of 127.0.0.1 (a context manager; :meth:`close` stops it)."""

    def __init__(self, fault: str | None = None, *, spare_probe: bool = True, drip_s: float = 0.05,
                 endless_mb: int = 256, name: str = "hostile", model: str = "hostile") -> None:
        """``drip_s``: the pause between two bytes (``drip``) or before each completion (``slow``)."""
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}: one of {', '.join(FAULTS)}")
        self.fault = fault
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = _State(fault, spare_probe, drip_s, endless_mb, model)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        self.port = int(self._server.server_address[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.endpoint = Endpoint(name, self.base_url, model, label=f"Hostile engine ({fault or 'well-behaved'})",
                                 source="tests")

    @property
    def sent(self) -> int:
        """Bytes written to clients so far."""
        return self._server.state.sent

    @property
    def requests(self) -> list[tuple[str, str, Any]]:
        """(method, path with its query, JSON body) of every request received, in order."""
        with self._server.state.lock:
            return list(self._server.state.requests)

    def close(self) -> None:
        self._server.state.stop.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> HostileEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
