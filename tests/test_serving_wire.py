"""The wire under the served client, against the suite's hostile engine on 127.0.0.1: one deadline over the whole
exchange (a server that drips its answer a byte at a time is cut at the timeout, status line included), a size
cap enforced while the body streams (an endless answer is not read past it: the server sees the client hang up),
JSON nested past reading, and an engine's traceback never relayed whole."""

from __future__ import annotations

import dataclasses

import pytest

from explorer.runtime import cancel
from explorer.serving import client, embedding, probe, scoring
from explorer.serving.client import ServedError
from tests.hostile_engine import SECRET_PATH, TRACEBACK, HostileEngine

pytestmark = pytest.mark.timeout(60)  # without the deadline, the drip alone would take minutes


def test_a_dripping_server_is_cut_at_the_deadline_headers_included() -> None:
    with HostileEngine("drip", spare_probe=False, drip_s=0.05) as engine:  # ~250 bytes: about 12 s in all
        ep = dataclasses.replace(engine.endpoint, timeout=1.0)
        with pytest.raises(ServedError) as err:
            client.models(ep)
        assert err.value.kind == "timeout" and "did not answer within 1.0 s" in str(err.value)
        caps = probe.probe(ep)  # every probe request together within the endpoint's timeout
        assert not caps.reachable and "did not answer within 1 s, the longest its probe waits" in caps.error
        assert engine.sent < 100  # the client hung up after a fraction of the status line and headers


def test_a_page_budget_cuts_a_dripping_answer_as_a_stop_not_a_failure() -> None:
    with HostileEngine("drip", spare_probe=False, drip_s=0.05) as engine:
        token = cancel.CancelToken(cancel.RequestBudget(0.5, 2**40, "test"))
        with cancel.scope(token), pytest.raises(cancel.RequestStopped) as err:
            client.models(engine.endpoint)
        assert err.value.reason == "time"


def test_an_endless_answer_stops_at_the_cap_while_it_streams() -> None:
    with HostileEngine("endless", spare_probe=False, endless_mb=256) as engine:
        with pytest.raises(ServedError) as err:
            client.models(engine.endpoint)
        assert err.value.kind == "garbage" and "64 MB" in str(err.value)
        assert engine.sent < 128 * 2**20  # read as it came and dropped at the cap (not 256 MB, then refused)


def test_json_nested_past_reading_is_one_message() -> None:
    with HostileEngine("nested", spare_probe=False) as engine, pytest.raises(ServedError) as err:
        client.models(engine.endpoint)
    assert "nested too deep" in str(err.value)


def test_an_engines_traceback_is_shown_as_its_last_line_without_paths() -> None:
    with HostileEngine("traceback", spare_probe=False) as engine, pytest.raises(ServedError) as err:
        client.complete(engine.endpoint, "Hello", max_tokens=1)
    said = str(err.value)
    assert err.value.status == 500 and "(500, a server error): RuntimeError: CUDA out of memory" in said
    assert SECRET_PATH not in said and "/opt/engine" not in said and "Traceback" not in said
    assert "\n" not in said and len(said) < len(TRACEBACK)


def test_scoring_keeps_what_was_scored_when_the_budget_ends() -> None:
    with HostileEngine("slow", drip_s=0.4) as engine:
        ep = dataclasses.replace(engine.endpoint, max_concurrent=1)
        pairs = [("Paris is the", f" capital {i}.") for i in range(12)]  # 12 x 0.4 s, one at a time
        token = cancel.CancelToken(cancel.RequestBudget(1.5, 2**40, "test"))
        probe.capabilities(ep)  # probed outside the budget (its answers are not slow)
        with cancel.scope(token):
            done, stopped = scoring.scored_anytime(ep, pairs)
    assert stopped is not None and stopped.reason == "time"
    assert 0 < sum(d is not None for d in done) < len(pairs)


def test_the_similarity_matrix_keeps_the_sentences_embedded_when_the_budget_ends() -> None:
    with HostileEngine("slow", drip_s=0.4) as engine:
        ep = dataclasses.replace(engine.endpoint, max_concurrent=1)
        probe.capabilities(ep)
        sentences = [f"Sentence number {i} here." for i in range(10)]  # one request each (batch 1): 4 s in all
        with cancel.scope(cancel.CancelToken(cancel.RequestBudget(1.5, 2**40, "test"))):
            res = embedding.similarity(ep, sentences, batch=1)
    assert 0 < len(res.sentences) < len(sentences) and len(res.matrix) == len(res.sentences)
    assert res.sentences == tuple(sentences[:len(res.sentences)])  # in order, the first ones
    assert any(n.kind == "stopped" and f"{len(res.sentences)} of 10 sentences" in n.text for n in res.notices)


def test_a_probe_that_runs_out_of_time_is_asked_again_not_trusted() -> None:
    """A busy server: the probe's time ends before its scoring question is answered. What it could not ask is
    unknown, not lacking: the next call probes again (an answered probe is trusted for minutes), and a task that
    needs the unanswered capability asks afresh before refusing."""
    with HostileEngine("slow", spare_probe=False, drip_s=0.6) as engine:
        ep = dataclasses.replace(engine.endpoint, name="busy-probe", timeout=1.5)  # two answers fit, not three
        probe.forget(ep)
        first = probe.capabilities(ep)
        assert first.reachable and first.top_k and not first.complete
        why = first.why_not("prompt_logprobs") or ""
        assert "ran out of its" in why or "did not answer within" in why  # time, said as time
        assert probe.capabilities(ep) is not first  # asked again, not read from the cache
        patient = dataclasses.replace(ep, timeout=15.0)
        assert probe.require(patient, "prompt_logprobs", "scoring").prompt_logprobs
        answered = probe.capabilities(patient)
        assert answered.complete and probe.capabilities(patient) is answered  # a complete probe is kept
