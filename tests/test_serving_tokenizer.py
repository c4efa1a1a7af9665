"""A served model's own tokenizer through its server's tokenize route (a real engine on 127.0.0.1): found by the
probe, long texts shown in part with the full count, bad input refused before any request, the CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from explorer.core.errors import ExplorerError
from explorer.serving import backend, probe, tokenizer
from explorer.serving.endpoints import Endpoint
from tests.test_cli_served import _run

CLOSED = Endpoint("x", "http://127.0.0.1:9/v1")  # nothing listens on port 9
BUSY_ENGINE = 600.0  # seconds a request may wait on a busy 2-core runner


def test_the_probe_finds_the_engines_own_route(served_engine) -> None:
    caps = probe.capabilities(served_engine.endpoint)
    assert caps.tokenizer == {"vLLM": "vLLM", "llama-cpp-python": "llama-cpp-python"}[caps.engine]
    assert probe.summary(served_engine.endpoint, caps)["tokenizer"] == caps.tokenizer


def test_a_long_text_is_counted_in_full_and_shown_in_part(served_engine) -> None:
    text = " ".join(["word"] * (tokenizer.MAX_PIECES + 40))
    # three detokenize requests (<bos>, "word", " word": one per distinct token, not 512), each behind whatever the
    # one engine of this test process is still computing (a page that gave up on a request leaves it running there):
    # a busy runner's wait, not an answer past the endpoint's 60 s
    out = backend.served(replace(served_engine.endpoint, timeout=BUSY_ENGINE)).tokens(text)
    assert out.total == tokenizer.MAX_PIECES + 41  # <bos> and one token per " word"
    assert out.tokenization.count == tokenizer.MAX_PIECES
    assert any(f"{out.total:,} tokens" in n.text for n in out.notices)


def test_a_character_outside_the_vocabulary_is_shown_as_its_bytes(served_engine) -> None:
    """Gemma has no piece for "ꙮ" (U+A66E): three byte tokens, which llama-cpp-python cannot detokenize alone (a
    500 for the whole text before the fix); the vLLM tier detokenizes them itself."""
    out = backend.served(replace(served_engine.endpoint, timeout=BUSY_ENGINE)).tokens("a ꙮ b")
    pieces = list(out.tokenization.pieces)
    assert out.total == len(pieces) == 7  # <bos>, "a", " ", three bytes, " b"
    assert pieces[1:3] == ["a", " "] and pieces[-1] == " b"
    if probe.capabilities(served_engine.endpoint).engine == "llama-cpp-python":
        assert pieces[3:6] == ["<0xEA>", "<0x99>", "<0xAE>"]  # U+A66E's UTF-8, each where the walk stands


@pytest.mark.parametrize("text, said", [("", "empty"), (None, "must be a string|not NoneType"),
                                        ("x" * 200_001, "characters")])
def test_bad_text_is_refused_before_any_request(text, said: str) -> None:
    with pytest.raises(ExplorerError, match=said):  # the closed port would fail differently
        tokenizer.tokenize(CLOSED, text, "vLLM")


def test_an_unknown_style_is_refused() -> None:
    with pytest.raises(ExplorerError, match="does not tokenize through any route"):
        tokenizer.tokenize(CLOSED, "hello", "")


def test_the_cli_prints_the_servers_tokens_beside_a_shipped_tokenizer(served_engine, capsys) -> None:
    url = served_engine.endpoint.base_url
    code, out, err = _run(capsys, "tokenize", "--base-url", url, "--text", "Hello <b>world</b> 🤗", "--tokenizers",
                          "gpt2", "--json")
    assert code == 0, err
    served, gpt2 = json.loads(out)
    assert served["name"].startswith("served:") and served["algorithm"] == "the server's own"
    assert served["ids"][0] == 2 and served["special"][0] and gpt2["name"] == "gpt2"
    code, _, err = _run(capsys, "tokenize", "--base-url", "http://127.0.0.1:9/v1", "--text", "Hello")
    assert code != 0 and "connection was refused" in err and "Traceback" not in err
