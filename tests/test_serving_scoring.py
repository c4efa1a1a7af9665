"""Whole-text scoring on a real engine (llama-cpp-python on 127.0.0.1 serving the bundled Gemma GGUF): one echo
request per text, tokens matched by text offset, and one clear ExplorerError for each way a server fails.

The engine scores about 0.12 s per token on 2 cores, so every text here is one short sentence."""

from __future__ import annotations

from dataclasses import replace

import pytest

from explorer.core import limits
from explorer.core.errors import ExplorerError
from explorer.serving import scoring
from explorer.serving.endpoints import Endpoint

CONTEXT = "The capital of France is"
CLOSED = Endpoint("x", "http://127.0.0.1:9/v1")  # nothing listens on port 9


def test_paris_scores_above_london_and_a_straddling_token_counts_as_continuation(served_engine) -> None:
    ep = served_engine.endpoint
    paris, london = scoring.score_many(ep, [(CONTEXT, " Paris."), (CONTEXT, " London.")])  # in parallel, in order
    assert paris > london and paris < 0
    # "is " + "Paris." is tokenised "is| Paris|.": " Paris" starts inside the context, so it is the continuation's
    straddling = scoring.scored(ep, CONTEXT + " ", "Paris.")
    assert straddling.logprob == pytest.approx(paris, abs=1e-6) and straddling.scored == 2
    assert straddling.whole < straddling.logprob  # the context's own tokens count in the whole text only


@pytest.mark.parametrize("context, continuation, said", [
    (CONTEXT, "", "continuation is empty"),
    ("   ", "  ", "only whitespace"),
    (CONTEXT, "x" * limits.SERVED_SCORED_CHARS, "characters"),
    (CONTEXT, " Paris\x00", "NUL"),
    (None, " Paris", "must be a string"),
])
def test_bad_input_is_refused_before_any_request(context, continuation, said: str) -> None:
    with pytest.raises(ExplorerError, match=said):  # the closed port would fail differently
        scoring.score(CLOSED, context, continuation)


def test_a_closed_port_is_one_clear_error() -> None:
    with pytest.raises(ExplorerError, match="connection was refused") as err:
        scoring.score_many(CLOSED, [(CONTEXT, " Paris."), (CONTEXT, " London.")])
    assert "127.0.0.1:9" in str(err.value)


def test_a_wrong_model_name_is_one_clear_error(served_engine) -> None:
    with pytest.raises(ExplorerError, match="does not serve the model 'nope'.*gemma3-270m"):
        scoring.score(replace(served_engine.endpoint, model="nope"), CONTEXT, " Paris.")


def test_a_server_stopped_after_its_probe_is_one_clear_error(fresh_engine) -> None:
    ep = fresh_engine.endpoint
    assert scoring.score(ep, "Hello", " world") < 0  # probed and answering
    fresh_engine.stop()
    with pytest.raises(ExplorerError, match="connection was refused|closed the connection"):
        scoring.score_many(ep, [(CONTEXT, " Paris."), (CONTEXT, " London."), (CONTEXT, " Rome.")])

