"""explorer.runtime.cancel: the per-request budget from injected device facts, and the token the loops check."""

from __future__ import annotations

import threading

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from explorer.core.errors import ExplorerError
from explorer.runtime import cancel
from explorer.runtime.cancel import CancelToken, MachineFacts, RequestBudget, RequestStopped
from explorer.runtime.resolve import resolve
from explorer.tasks.generation.beam import BeamDecoder
from explorer.tasks.generation.decoder import TokenDecoder
from explorer.tasks.generation.strategy import DecodingSettings

GB = 2**30


class Clock:
    """A clock a test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_budget_is_a_function_of_the_device() -> None:
    two = cancel.request_budget(MachineFacts(None, 2, 24 * GB, 0), env={})
    one = cancel.request_budget(MachineFacts(None, 1, 8 * GB, 0), env={})
    many = cancel.request_budget(MachineFacts(None, 64, 256 * GB, 0), env={})
    gpu = cancel.request_budget(MachineFacts("cuda", 16, 128 * GB, 80 * GB), env={})
    assert (two.seconds, one.seconds, many.seconds, gpu.seconds) == (60.0, 90.0, 45.0, 30.0)
    assert two.memory_bytes == int(24 * GB * 0.3) and one.memory_bytes == int(8 * GB * 0.3)
    assert gpu.memory_bytes == 40 * GB and "GPU" in gpu.why  # the accelerator's memory, not the RAM


def test_environment_overrides_and_refuses_nonsense() -> None:
    facts = MachineFacts(None, 2, 24 * GB, 0)
    b = cancel.request_budget(facts, env={"EXPLORER_REQUEST_SECONDS": "5", "EXPLORER_REQUEST_MB": "100"})
    assert (b.seconds, b.memory_bytes, b.why) == (5.0, 100 * 2**20, "EXPLORER_REQUEST_MB")
    assert cancel.request_budget(facts, env={"EXPLORER_REQUEST_SECONDS": "  "}).seconds == 60.0  # blank: unset
    for bad in ("abc", "-3", "0", "nan"):
        with pytest.raises(ExplorerError, match="EXPLORER_REQUEST_SECONDS=.* above 0"):
            cancel.request_budget(facts, env={"EXPLORER_REQUEST_SECONDS": bad})


def test_device_facts_read_this_machine() -> None:
    facts = cancel.machine_facts()
    assert facts.cores >= 1 and facts.ram_bytes > 0
    assert cancel.request_budget(facts).seconds > 0


def test_time_budget_stops_with_a_message_that_says_what_to_do() -> None:
    clock = Clock()
    token = CancelToken(RequestBudget(10.0, GB, "test"), clock=clock, memory=lambda: 0)
    token.check()
    clock.now = 10.5
    with pytest.raises(RequestStopped) as err:
        token.check()
    assert err.value.reason == "time" and isinstance(err.value, ExplorerError)
    assert "10 s" in str(err.value) and "command line" in str(err.value)
    clock.now = 0.0  # once stopped, stays stopped
    with pytest.raises(RequestStopped):
        token.check()


def test_memory_budget_counts_growth_since_the_start() -> None:
    used = [5 * GB]
    token = CancelToken(RequestBudget(60.0, GB, "test"), clock=Clock(), memory=lambda: used[0])
    used[0] = 5 * GB + GB // 2
    token.check()  # half a GB grown: fine
    used[0] = 7 * GB
    with pytest.raises(RequestStopped) as err:
        token.check()
    assert err.value.reason == "memory" and "2.0 GB" in str(err.value)


def test_a_session_gone_stops_the_request() -> None:
    alive = [True]
    token = CancelToken(RequestBudget(60.0, GB, "test"), wanted=lambda: alive[0], clock=Clock(), memory=lambda: 0)
    token.check()
    alive[0] = False
    with pytest.raises(RequestStopped) as err:
        token.check()
    assert err.value.reason == "gone"


def test_check_is_free_outside_a_request_and_scoped_per_thread() -> None:
    cancel.check()  # no token: nothing happens (the CLI)
    assert cancel.current() is None and cancel.memory_left() is None
    token = CancelToken(RequestBudget(60.0, GB, "test"), clock=Clock(), memory=lambda: 0)
    seen: list[object] = []
    with cancel.scope(token):
        assert cancel.current() is token and cancel.memory_left() == GB
        worker = threading.Thread(target=lambda: seen.append(cancel.current()))
        worker.start()
        worker.join()
        token.cancel()
        with pytest.raises(RequestStopped):
            cancel.check()
    assert seen == [None]  # another session's thread does not see this request's token
    assert cancel.current() is None


@pytest.fixture(scope="module")
def tiny_lm() -> GPT2LMHeadModel:
    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=50, n_positions=64)).eval()


class _Tok:
    def decode(self, ids, **_):  # noqa: ANN001, ANN003
        return " ".join(f"t{i}" for i in ids)

    def convert_ids_to_tokens(self, i):  # noqa: ANN001
        return [f"t{j}" for j in i] if isinstance(i, list) else f"t{i}"


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_decoding_stops_at_the_next_step_and_keeps_its_tokens(tiny_lm, strategy) -> None:
    settings = DecodingSettings(strategy, max_new_tokens=40, beams=2)
    cls = BeamDecoder if strategy == "beam" else TokenDecoder
    decoder = cls(tiny_lm, _Tok(), (1, 2, 3), settings)
    calls = [0]

    def wanted() -> bool:
        calls[0] += 1
        return calls[0] <= 3  # the session goes away after three steps

    with cancel.scope(CancelToken(RequestBudget(60.0, 100 * GB, "t"), wanted=wanted)), \
            pytest.raises(RequestStopped):
        decoder.run()
    done = len(decoder.steps)
    assert 1 <= done <= 3 and not decoder.finished
    decoder.run(until=done + 2)  # outside the request (the next run) it simply continues
    assert len(decoder.steps) == done + 2


def test_a_model_load_is_not_charged_to_the_request(monkeypatch, tmp_path) -> None:
    """A load is paid once for every later request and cannot be cut half-way: a request whose load took longer than
    its whole budget still has its budget for the answer (its memory growth still counts)."""
    from explorer.runtime import loading, modelcache
    from tests.tiny_models import save_tiny

    path = save_tiny("bert", tmp_path / "bert")
    clock, real = Clock(), loading._load_uncached

    def slow_load(*args, **kwargs):
        clock.now += 100.0  # a cold load on a busy server
        return real(*args, **kwargs)

    monkeypatch.setattr(loading, "_load_uncached", slow_load)
    modelcache.clear_cache()
    token = CancelToken(RequestBudget(60.0, 100 * GB, "test"), clock=clock, memory=lambda: 0)
    with cancel.scope(token):
        loading.load_model(resolve(str(path)), "masked-lm")
        cancel.check()  # 100 s went to the load: nothing charged
        assert token.seconds_left() == 60.0
        clock.now += 61.0
        with pytest.raises(RequestStopped):
            cancel.check()  # the answer's own time still is
    modelcache.clear_cache()


def test_room_for_plans_a_step_against_what_is_left() -> None:
    clock = Clock()
    token = CancelToken(RequestBudget(10.0, GB, "test"), clock=clock, memory=lambda: 0)
    assert cancel.room_for(1e9)  # outside a request: no limit
    with cancel.scope(token):
        clock.now = 7.0
        assert cancel.now() == 7.0 and cancel.room_for(3.0) and not cancel.room_for(3.5)
        assert not cancel.room_for(2.0, reserve=1.5)  # the work after it keeps its share
