"""Decoding lab with a served model beside the local one (AppTest): the real engine on 127.0.0.1 configured in the
environment, as an operator would; a stopped server is one warning and the local model still answers."""

from __future__ import annotations

import pytest

from tests.pages.conftest import assert_clean, figures, page_app, shown
from tests.tiny_gemma import save_tiny_gemma


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> str:
    return str(save_tiny_gemma(tmp_path_factory.mktemp("gemma")))


def _configure(monkeypatch, endpoint, name: str = "gemma") -> None:
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", endpoint.base_url)
    monkeypatch.setenv("EXPLORER_ENDPOINT_MODEL", endpoint.model)
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", name)


def test_the_served_model_answers_beside_the_local_one(tiny_dir, served_engine, monkeypatch) -> None:
    _configure(monkeypatch, served_engine.endpoint)
    at = page_app("decoding.py", model=tiny_dir, strategies="greedy,beam", beams="2", n="2").run()
    assert_clean(at)
    captions = " ".join(c.value for c in at.caption)
    assert "llama-cpp-python" in captions and "127.0.0.1" in captions and "(gemma3-270m)" in captions
    assert len(at.dataframe) == 3  # the local table and its steps' table, the served table
    assert [t.value.split(":")[0].strip() for t in at.text] == ["greedy", "beam", "greedy", "beam"]
    assert len(figures(at)) == 5  # local: next-token, tokens, repetition; served: next-token, tokens
    assert at.query_params["served"] == "gemma"
    at.button(key="dec_step").click().run()  # the served decoders continue: one more token each
    assert_clean(at)
    assert "2 token(s) per strategy, one request per step" in " ".join(c.value for c in at.caption)


def test_a_stopped_server_is_one_warning_and_the_local_model_goes_on(tiny_dir, fresh_engine, monkeypatch) -> None:
    _configure(monkeypatch, fresh_engine.endpoint, "doomed")
    fresh_engine.stop()
    at = page_app("decoding.py", model=tiny_dir, strategies="greedy", n="2").run()
    assert_clean(at)
    left_out = [w for w in shown(at.warning) if "left out" in w]
    assert len(left_out) == 1 and "connection was refused" in left_out[0]
    assert len(at.dataframe) == 2 and [t.value.split(":")[0].strip() for t in at.text] == ["greedy"]


def test_a_link_can_leave_the_served_models_out(tiny_dir, served_engine, monkeypatch) -> None:
    _configure(monkeypatch, served_engine.endpoint)
    at = page_app("decoding.py", model=tiny_dir, strategies="greedy", n="1", served="none").run()
    assert_clean(at)
    assert len(at.dataframe) == 2 and at.multiselect(key="dec_served").value == []
