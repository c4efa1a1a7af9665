"""Every way a served call fails, injected with real servers on 127.0.0.1 (the engine stopped mid-request, a closed
port, a wrong model name, an HTTP server that is not an engine): one ServedError each, in words."""

from __future__ import annotations

import dataclasses
import http.server
import threading
import time

import pytest

from explorer.runtime import cancel
from explorer.serving import client, decoding, probe
from explorer.serving.client import ServedError
from explorer.serving.endpoints import Endpoint

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


def test_a_server_stopped_in_the_middle_of_a_request_is_said(fresh_engine) -> None:
    ep, got = fresh_engine.endpoint, {}

    def long_request() -> None:
        try:
            client.complete(ep, "Once upon a time", max_tokens=150, logprobs=5)
        except ServedError as err:
            got["err"] = err

    worker = threading.Thread(target=long_request)
    worker.start()
    time.sleep(2.0)  # the request is in flight: 150 tokens with alternatives take far longer
    fresh_engine.stop()
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


def test_the_endpoints_bound_and_the_request_budget_hold(served_engine) -> None:
    one = dataclasses.replace(served_engine.endpoint, name="one-at-a-time", max_concurrent=1)
    holder = threading.Thread(target=client.complete, args=(one, "Once upon a time"),
                              kwargs={"max_tokens": 30, "logprobs": 5})  # 3 s of work
    holder.start()
    time.sleep(0.5)
    assert client.in_flight(one) == 1
    with pytest.raises(ServedError) as err:
        client.complete(one, "hi", max_tokens=1, timeout=1.0)
    assert err.value.kind == "busy" and "1 requests in flight" in _one_line(err.value)
    holder.join(120)
    token = cancel.CancelToken(cancel.RequestBudget(0.3, 2**30, "test"))
    with cancel.scope(token), pytest.raises(cancel.RequestStopped) as stop:  # a page's budget bounds the wait
        client.complete(served_engine.endpoint, "Once upon a time", max_tokens=20, logprobs=5)  # 2 s of work
    assert stop.value.reason == "time" and "stopped after" in _one_line(stop.value)  # stopped, not failed
    # the engine still computes the 20 tokens the page gave up on (llama-cpp-python cannot be told); a request of
    # one token queues behind them, so the next test finds the engine idle. Left running, they met the next
    # module's in-process forwards on the two cores and slowed both twentyfold (beam tests: 2 s alone, 40-50 s).
    client.complete(served_engine.endpoint, "hi", max_tokens=1, timeout=300.0)


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
