"""An engine that answers HTTP 200 with OpenAI-shaped JSON of the wrong types (the suite's own hostile engine on
127.0.0.1): every served call of the library ends in one ServedError naming the field, never a TypeError,
OverflowError or ValueError from deep inside; the probe says it as a reason, never raises."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.serving import answers, backend, decoding, embedding, fillin, probe, scoring
from explorer.serving.client import ServedError
from explorer.serving.endpoints import Endpoint
from explorer.tasks.generation import DecodingSettings
from tests.hostile_engine import HostileEngine

PROMPT = "Paris is the capital of"
COMPLETION_FAULTS = {  # fault -> the field the message names
    "logprobs-number": "choices[0].logprobs", "top-logprobs-number": "choices[0].logprobs.top_logprobs",
    "content-number": "choices[0].logprobs.content[0]", "text-number": "choices[0].text", "choices-number": "choices",
    "offset-huge": "choices[0].logprobs.text_offset[0]", "logprob-huge": "choices[0].logprobs.token_logprobs[0]"}
EMBEDDING_FAULTS = {"ragged": "different sizes", "count": "1 embeddings for 2 texts",
                    "nan-embedding": "data[0].embedding[0]", "embedding-strings": "data[0].embedding[0]"}
CALLS = {
    "next-token": lambda ep: decoding.next_token(ep, PROMPT, 5),
    "generate": lambda ep: decoding.generate(ep, PROMPT, DecodingSettings("greedy", max_new_tokens=2)),
    "fast": lambda ep: decoding.fast(ep, PROMPT, DecodingSettings("greedy", max_new_tokens=2)),
    "score": lambda ep: scoring.score(ep, "Paris is the", " capital of France."),
    "fill": lambda ep: fillin.fill_column(ep, "Paris is the [MASK] of France."),
    "qa": lambda ep: fillin.answer(ep, "What is Paris?", "Paris is the capital of France."),
}


@pytest.fixture(scope="module")
def engines():
    """One hostile engine per fault, started once for the module (the probe spared: the work gets the fault)."""
    made = {fault: HostileEngine(fault) for fault in (*COMPLETION_FAULTS, *EMBEDDING_FAULTS, "ids-infinity")}
    yield made
    for engine in made.values():
        engine.close()


def _said(err: BaseException) -> str:
    text = str(err)
    assert isinstance(err, ServedError) and err.kind == "garbage", repr(err)
    assert "\n" not in text and len(text) < 400 and "Traceback" not in text
    return text


@pytest.mark.parametrize(("fault", "call"), [(f, c) for f in COMPLETION_FAULTS for c in CALLS
                                            if c != "qa" or f in ("text-number", "choices-number")])  # qa: no logprobs
def test_a_completion_of_the_wrong_shape_is_one_message_naming_the_field(engines, fault: str, call: str) -> None:
    with pytest.raises(ExplorerError) as err:
        CALLS[call](engines[fault].endpoint)
    assert COMPLETION_FAULTS[fault] in _said(err.value)


@pytest.mark.parametrize("fault", EMBEDDING_FAULTS)
def test_embeddings_of_the_wrong_shape_or_count_are_one_message(engines, fault: str) -> None:
    for texts in (["A man eats.", "A dog runs."], ["A man eats.", "A dog runs.", "It rains."]):
        with pytest.raises(ExplorerError) as err:
            embedding.similarity(engines[fault].endpoint, texts)
        said = _said(err.value)
        assert EMBEDDING_FAULTS[fault] in said or fault in ("ragged", "count")


def test_token_ids_that_are_not_integers_are_one_message(engines) -> None:
    with pytest.raises(ExplorerError) as err:
        backend.served(engines["ids-infinity"].endpoint).tokens("Paris is the capital")
    assert "tokens[0]" in _said(err.value)


@pytest.mark.parametrize("fault", [*COMPLETION_FAULTS, *EMBEDDING_FAULTS, "ids-infinity", "nested", "endless"])
def test_the_probe_says_a_malformed_answer_as_a_reason_and_never_raises(fault: str) -> None:
    with HostileEngine(fault, spare_probe=False, endless_mb=80) as engine:
        caps = probe.probe(engine.endpoint)
    reasons = caps.error if not caps.reachable else " ".join(why for _, why in caps.missing)
    assert reasons and "Traceback" not in reasons
    assert not caps.reachable or not all((caps.top_k, caps.embeddings, caps.tokenizer))


def test_a_well_behaved_engine_passes_every_shape() -> None:
    with HostileEngine() as engine:
        caps = probe.probe(engine.endpoint)
        assert (caps.top_k, caps.prompt_logprobs, caps.max_k, caps.embeddings, caps.tokenizer) == \
            (True, True, 20, True, "llama-cpp-python")
        assert [c.token for c in decoding.next_token(engine.endpoint, PROMPT, 3).candidates] == [" Paris", " the", " a"]
        assert embedding.similarity(engine.endpoint, ["A man eats.", "A dog runs."]).dim == 8
        assert fillin.fill_column(engine.endpoint, "Paris is the [MASK] of France.").masks[0].predictions


@pytest.mark.parametrize(("data", "field"), [
    ({"choices": []}, "choices"), ({"choices": [{"text": "x", "logprobs": {"tokens": ["a"], "text_offset": [0, 1]}}]},
                                   "text_offset has 2 entries for 1 tokens"),
    ({"choices": [{"text": "x"}], "usage": {"prompt_tokens": "3"}}, "usage.prompt_tokens"),
    ({"choices": [{"text": "x", "logprobs": {"tokens": [1]}}]}, "tokens[0]"),
])
def test_a_shape_names_the_field_that_is_wrong(data: dict, field: str) -> None:
    ep = Endpoint("x", "http://127.0.0.1:9/v1")  # only its name is used: no request
    with pytest.raises(ServedError) as err:
        answers.logprobs(ep, answers.read(ep, answers.Completions, data, "/v1/completions").choices[0].logprobs, "t")
    assert field in str(err.value)
