"""Every way a served call fails, injected with real servers on 127.0.0.1 (the engine stopped mid-request, a closed
port, a wrong model name, an HTTP server that is not an engine): one ServedError each, in words."""

from __future__ import annotations

import contextlib
import dataclasses
import http.server
import threading
import time

import pytest

from explorer.runtime import cancel
from explorer.serving import client, decoding, probe
from explorer.serving.client import ServedError
from explorer.serving.endpoints import Endpoint
from tests.hostile_engine import HostileEngine

CLOSED = Endpoint("closed", "http://127.0.0.1:9/v1")  # the discard port: nothing listens there


def _one_line(err: BaseException) -> str:
    text = str(err)
    assert "\n" not in text and len(text) < 400 and "Traceback" not in text
    return text


def test_a_closed_port_says_to_start_the_server() -> None:
    with pytest.raises(ServedError) as err:
        client.complete(CLOSED, "hi", max_tokens=1)
    assert err.value.kind == "refused" and "connection was refused" in _one_line(err.value)
    caps = probe.probe(CLOSED)
    assert not caps.reachable and caps.why_not("top_k") == caps.error


def _wait_in_flight(ep: Endpoint, n: int) -> None:
    """Until ``n`` requests to ``ep`` are in flight (patience for a loaded machine, not a timing)."""
    deadline = time.monotonic() + 60
    while client.in_flight(ep) != n:
        assert time.monotonic() < deadline, f"{client.in_flight(ep)} requests in flight, not {n}"
        time.sleep(0.01)


def test_a_server_stopped_in_the_middle_of_a_request_is_said() -> None:
    """The engine holds the request until the test stops it (a real engine's 150 tokens once took long enough on
    one machine and not on a faster one): stopped mid-request at a moment the test chooses."""
    got: dict[str, ServedError] = {}
    engine = HostileEngine("hang")
    ep = engine.endpoint

    def long_request() -> None:
        try:
            client.complete(ep, "Once upon a time", max_tokens=150, logprobs=5)
        except ServedError as err:
            got["err"] = err

    worker = threading.Thread(target=long_request)
    worker.start()
    _wait_in_flight(ep, 1)
    engine.close()
    worker.join(30)
    assert got["err"].kind in ("dropped", "refused")
    assert "closed the connection" in _one_line(got["err"]) or "refused" in str(got["err"])
    with pytest.raises(ServedError, match="connection was refused"):  # and afterwards: not there
        client.complete(ep, "hi", max_tokens=1)


def test_a_model_the_server_does_not_serve_is_named(served_engine) -> None:
    wrong = dataclasses.replace(served_engine.endpoint, model="llama-70b")
    caps = probe.probe(wrong)
    assert not caps.reachable and "does not serve the model 'llama-70b'" in caps.error and "gemma3-270m" in caps.error
    with pytest.raises(ServedError, match="does not serve the model"):
        decoding.next_token(wrong, "The capital of France is", 5)


def test_more_alternatives_than_the_server_sends_are_cut_with_a_notice(served_engine) -> None:
    out = decoding.next_token(served_engine.endpoint, "The capital of France is", 30)
    assert len(out.candidates) == probe.WANTED_K
    assert any("at most 20 alternatives" in n.text for n in out.notices)


@pytest.fixture
def not_an_engine(tmp_path):
    """A real HTTP server on 127.0.0.1 that is not OpenAI-compatible (a static file server)."""
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "models").write_text("<html>not json</html>")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield Endpoint("static", f"http://127.0.0.1:{server.server_address[1]}/v1")
    server.shutdown()


def test_a_server_that_is_not_an_engine_is_said(not_an_engine) -> None:
    with pytest.raises(ServedError) as err:
        client.models(not_an_engine)
    assert err.value.kind == "garbage" and "not JSON" in _one_line(err.value)
    with pytest.raises(ServedError) as err:
        client.complete(not_an_engine, "hi", max_tokens=1)  # POST: the static server answers 501
    assert err.value.kind == "status" and "501" in _one_line(err.value)
    assert not probe.probe(not_an_engine).reachable


def test_the_endpoints_bound_and_the_request_budget_hold() -> None:
    """An engine that answers each completion after 30 s (its pace, not the machine's, decides what is in flight):
    a second request beside one in flight is refused as busy, and a page's 0.3 s budget bounds its wait."""
    with HostileEngine("slow", drip_s=30.0) as engine:
        one = dataclasses.replace(engine.endpoint, name="one-at-a-time", max_concurrent=1)
        def hold() -> None:
            with contextlib.suppress(ServedError):  # answered, or dropped when the engine closes
                client.complete(one, "Once upon a time", max_tokens=30, logprobs=5)

        holder = threading.Thread(target=hold, daemon=True)
        holder.start()
        _wait_in_flight(one, 1)
        with pytest.raises(ServedError) as err:
            client.complete(one, "hi", max_tokens=1, timeout=1.0)
        assert err.value.kind == "busy" and "1 requests in flight" in _one_line(err.value)
        token = cancel.CancelToken(cancel.RequestBudget(0.3, 2**30, "test"))
        with cancel.scope(token), pytest.raises(cancel.RequestStopped) as stop:  # a page's budget bounds the wait
            client.complete(engine.endpoint, "Once upon a time", max_tokens=20, logprobs=5)
        assert stop.value.reason == "time" and "stopped after" in _one_line(stop.value)  # stopped, not failed
    holder.join(30)  # closing the engine ends its wait: the held request is answered or dropped


def test_an_engine_stops_when_the_process_that_started_it_is_killed() -> None:
    """A killed test run or app must not leave its engines serving: the kernel stops them (Linux)."""
    import os
    import subprocess
    import sys
    import time

    import pytest

    from explorer.serving import localengine

    if not sys.platform.startswith("linux") or not localengine.available():
        pytest.skip("needs Linux and the engine (make engine)")
    code = ("from explorer.serving import localengine\nrun = localengine.start(name='orphan')\n"
            "print(run.process.pid, flush=True)\nimport time\ntime.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    engine = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    for _ in range(50):
        try:
            os.kill(engine, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(engine, 9)
    raise AssertionError("the engine outlived the process that started it")


def test_the_engine_listens_where_it_is_told_whatever_the_environment_says(monkeypatch) -> None:
    """llama-cpp-python's server reads HOST, PORT and CONFIG_FILE from the environment over its arguments:
    `make run-served PORT=8599` once had the engine bind the app's port and fail to start."""
    import sys
    from pathlib import Path

    from explorer.serving import localengine

    if not localengine.available():
        pytest.skip("needs the engine (make engine)")
    taken = localengine.free_port()
    monkeypatch.setenv("PORT", str(taken))
    monkeypatch.setenv("HOST", "0.0.0.0")
    monkeypatch.setenv("CONFIG_FILE", "no-such-config.json")  # it would exit: "not found"
    with localengine.running(name="env") as engine:
        assert engine.endpoint.base_url != f"http://127.0.0.1:{taken}/v1"
        assert client.call(engine.endpoint, "GET", "/models")  # it answers on the port it was given
        if sys.platform.startswith("linux"):  # bound to 127.0.0.1 only, not 0.0.0.0
            port = int(engine.endpoint.base_url.rsplit(":", 1)[1].split("/")[0])
            listening = Path("/proc/net/tcp").read_text()
            assert f"0100007F:{port:04X}" in listening and f"00000000:{port:04X}" not in listening
