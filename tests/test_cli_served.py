"""The CLI's served models against the real engine: ``endpoints``, ``next-token`` / ``generate`` with ``--endpoint``
or ``--base-url``, ``doctor``; mistakes are one line and exit 2 before any request."""

from __future__ import annotations

import json

import pytest

from explorer.cli import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as stop:  # argparse's own refusals
        code = int(stop.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def configured(served_engine, monkeypatch):
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", served_engine.endpoint.base_url)
    monkeypatch.setenv("EXPLORER_ENDPOINT_MODEL", "gemma3-270m")
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", "gemma")
    monkeypatch.setenv("EXPLORER_ENDPOINT_KEY_ENV", "GEMMA_KEY")
    monkeypatch.setenv("GEMMA_KEY", "sk-do-not-print")  # llama-cpp-python without --api_key ignores it
    return served_engine.endpoint


def test_endpoints_lists_what_each_server_can_do_and_never_the_key(configured, capsys) -> None:
    code, out, err = _run(capsys, "endpoints", "--json")
    assert code == 0, err
    (row,) = json.loads(out)
    caps = row["capabilities"]
    assert row["key"] == "served:gemma" and caps["engine"] == "llama-cpp-python" and caps["top_k"]
    assert caps["prompt_logprobs"] and not caps["embeddings"] and "embedding=True" in caps["missing"]["embeddings"]
    code, out, _ = _run(capsys, "doctor", "--no-sizes")
    assert code == 0 and "served:gemma" in out and "llama-cpp-python" in out
    assert "sk-do-not-print" not in out + err


def test_next_token_and_generate_on_a_served_model(configured, capsys) -> None:
    code, out, err = _run(capsys, "next-token", "--endpoint", "gemma", "--text", "The capital of France is",
                          "--top-k", "3", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["device"] == "served" and [t["token"] for t in data["tokens"]] == [" the", " a", " Paris"]
    code, out, err = _run(capsys, "generate", "--base-url", configured.base_url, "--model", "gemma3-270m", "--text",
                          "The capital of France is", "--max-new-tokens", "4", "--fast", "--json")
    assert code == 0, err
    fast = json.loads(out)
    code, out, err = _run(capsys, "generate", "--endpoint", "gemma", "--text", "The capital of France is",
                          "--max-new-tokens", "4", "--json")
    assert code == 0, err
    assert json.loads(out)["tokens"] == fast["tokens"] and len(fast["tokens"]) == 4


@pytest.mark.parametrize(("argv", "said"), [
    (["next-token", "--endpoint", "nope", "--text", "x"], "No served endpoint is called 'nope'"),
    (["generate", "--model", "gemma3-270m", "--fast", "--text", "x"], "--fast asks a served model"),
    (["next-token", "--base-url", "ftp://x", "--text", "x"], "not an http(s) URL"),
    (["next-token", "--base-url", "http://127.0.0.1:9/v1", "--text", "x"], "connection was refused"),
    (["next-token", "--text", "x"], "Give --model"),
    (["generate", "--base-url", "http://127.0.0.1:9/v1", "--text", "", "--max-new-tokens", "2"], "Type a prompt"),
])
def test_mistakes_are_one_line_and_exit_2(capsys, argv: list[str], said: str) -> None:
    code, _, err = _run(capsys, *argv)
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1
