"""The CLI's served models against the real engine: ``endpoints``, ``next-token`` / ``generate`` with ``--endpoint``
or ``--base-url``, ``doctor``; mistakes are one line and exit 2 before any request."""

from __future__ import annotations

import json
import logging

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


# ---- a misbehaving engine (the suite's own, on 127.0.0.1): every served command says it in one line ----------------

TEXT = "Paris is the capital of"
COMMANDS = {
    "next-token": ["next-token", "--endpoint", "h", "--text", TEXT, "--top-k", "3"],
    "generate": ["generate", "--endpoint", "h", "--text", TEXT, "--max-new-tokens", "2"],
    "generate-fast": ["generate", "--endpoint", "h", "--text", TEXT, "--max-new-tokens", "2", "--fast"],
    "fill-mask": ["fill-mask", "--endpoint", "h", "--text", "Paris is the [MASK] of France."],
    "infill": ["infill", "--endpoint", "h", "--text", "Paris is the ___ of France."],
    "qa": ["qa", "--endpoint", "h", "--question", "What is Paris?", "--context", "Paris is the capital of France."],
    "similarity": ["similarity", "--endpoint", "h", "A man eats.", "A dog runs.", "It rains."],
    "tokenize": ["tokenize", "--endpoint", "h", "--text", TEXT, "--tokenizers", "gpt2"],
}
WRONG = [  # (fault, the commands that meet it, the field the message names)
    ("top-logprobs-number", ["next-token", "generate", "generate-fast", "fill-mask", "infill"], "top_logprobs"),
    ("offset-huge", ["next-token", "generate-fast", "fill-mask", "infill"], "text_offset[0]"),
    ("logprob-huge", ["next-token", "generate", "fill-mask", "infill"], "token_logprobs[0]"),
    ("content-number", ["next-token", "generate", "fill-mask"], "content[0]"),
    ("text-number", ["qa", "generate-fast"], "choices[0].text"),
    ("ragged", ["similarity"], "different sizes"), ("count", ["similarity"], "embeddings for"),
    ("nan-embedding", ["similarity"], "data[0].embedding[0]"), ("ids-infinity", ["tokenize"], "tokens[0]"),
]


@pytest.fixture(scope="module")
def hostile_engines():
    from tests.hostile_engine import HostileEngine

    made: dict[str, HostileEngine] = {}

    def get(fault: str) -> HostileEngine:
        if fault not in made:
            made[fault] = HostileEngine(fault, name=f"h-{fault}", endless_mb=96)
        return made[fault]

    yield get
    for engine in made.values():
        engine.close()


def _hostile_run(capsys, monkeypatch, engine, argv: list[str], timeout_s: float = 1.0) -> str:
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", engine.base_url)
    monkeypatch.setenv("EXPLORER_ENDPOINT_MODEL", "hostile")
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", "h")
    monkeypatch.setenv("EXPLORER_ENDPOINT_TIMEOUT", str(timeout_s))  # the drip is cut after a second, not minutes
    code, _, err = _run(capsys, *argv)
    assert code == 2 and err.strip() and "Traceback" not in err, err
    assert all(line.startswith("error: ") for line in err.strip().splitlines()), err
    return err


@pytest.mark.parametrize(("fault", "command", "field"), [(f, c, field) for f, cs, field in WRONG for c in cs])
def test_an_answer_of_the_wrong_shape_is_one_line_naming_the_field(capsys, monkeypatch, hostile_engines, fault: str,
                                                                  command: str, field: str) -> None:
    err = _hostile_run(capsys, monkeypatch, hostile_engines(fault), COMMANDS[command])
    assert field in err


@pytest.mark.timeout(120)  # without a deadline over the whole exchange, the drip alone holds a command for minutes
@pytest.mark.parametrize("fault", ["drip", "endless", "traceback", "nested"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_misbehaving_wire_is_one_line_for_every_served_command(capsys, monkeypatch, hostile_engines, fault: str,
                                                                command: str) -> None:
    # the endless answer must reach the size cap, not the deadline, however slowly this machine reads 64 MB
    err = _hostile_run(capsys, monkeypatch, hostile_engines(fault), COMMANDS[command],
                       timeout_s=60.0 if fault == "endless" else 1.0)
    said = {"drip": "did not answer within 1.0 s", "endless": "64 MB", "traceback": "RuntimeError: CUDA out of memory",
            "nested": "nested too deep"}[fault]
    assert said in err and "/opt/engine" not in err


SECRET = "SECRET0123456789abcdef"


@pytest.mark.parametrize("url", [f"http://127.0.0.1:9/v1?api_key=sk-{SECRET}", f"http://admin:{SECRET}@127.0.0.1:9/v1",
                                 f"http://127.0.0.1:9/keys/sk-{SECRET}/v1"])
def test_a_key_in_an_endpoint_url_is_never_printed(capsys, monkeypatch, caplog, url: str) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", url)
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", "keyed")
    printed = ""
    for argv in (["endpoints"], ["endpoints", "--json"], ["next-token", "--endpoint", "keyed", "--text", "x"],
                 ["similarity", "--endpoint", "keyed", "a", "b"], ["doctor", "--no-sizes", "--no-probe"],
                 ["next-token", "--base-url", url, "--text", "x"]):
        code, out, err = _run(capsys, *argv)
        printed += out + err
        assert code in (0, 2)
    assert ("base URL alone" in printed or "user name or password" in printed) and "Traceback" not in printed
    assert SECRET not in printed and SECRET not in caplog.text
