"""Decoding a served model against a real engine (llama-cpp-python on 127.0.0.1, the bundled Gemma GGUF with its
vocabulary cut: :mod:`tests.cut_gguf`), compared with the same GGUF loaded in-process, and the client-side beam
search against the local one on the same weights."""

from __future__ import annotations

import math

import pytest
import torch

from explorer.core import limits
from explorer.core.errors import ExplorerError
from explorer.runtime.resolve import resolve
from explorer.serving import decoding, probe
from explorer.tasks.generation import DecodingSettings, load_decoder
from explorer.tasks.generation.beam import BeamDecoder
from explorer.tasks.generation.steps import eos_ids

PROMPT = "The capital of France is"
# Q4_K_M kernels (the engine) against the dequantised float32 weights (in-process): measured 0.18 at most on this
# prompt's top 5 with the whole vocabulary, 0.31 with the cut one (its normaliser sums 8,610 pieces, so the noise
# of the few likely ones weighs more); the bound leaves room for another CPU's kernels.
LOGPROB_TOLERANCE = 0.4


@pytest.fixture(scope="module")
def local(cut_engine):
    return load_decoder(resolve(str(cut_engine.model)), device="cpu")


def test_next_token_top5_equals_the_in_process_model(cut_engine, local) -> None:
    from explorer.tasks.generation import next_token

    served = decoding.next_token(cut_engine.endpoint, PROMPT, 5)
    here = next_token(local, PROMPT, 10)
    engine = probe.capabilities(cut_engine.endpoint).engine
    tol = 2e-3 if engine == "vLLM" else LOGPROB_TOLERANCE  # vLLM (make test-vllm) runs the float32 weights
    # every served candidate is among the in-process model's, with its log-probability; the order is the same up to
    # candidates closer than the tolerance allows to tell apart (a swap of two such is the kernels, not a bug)
    there = {c.token: math.log(c.probability) for c in here.candidates}
    for s in served.candidates:
        assert s.token in there and abs(s.logit - there[s.token]) <= tol, (s, here.candidates)
    for s, h in zip(served.candidates, here.candidates[:5], strict=True):
        assert s.token == h.token or abs(there[s.token] - math.log(h.probability)) <= 2 * tol, (s, h)
    assert served.device == "served" and engine in served.device_name
    assert "127.0.0.1" in served.device_name and served.prompt_tokens > 0


def test_step_by_step_greedy_equals_the_servers_own_greedy(cut_engine) -> None:
    settings = DecodingSettings("greedy", max_new_tokens=8)
    stepped = decoding.generate(cut_engine.endpoint, PROMPT, settings)
    at_once = decoding.fast(cut_engine.endpoint, PROMPT, settings)
    assert stepped.tokens == at_once.tokens and len(stepped.tokens) == 8
    assert stepped.text == at_once.text
    assert all(len(s.top) == 5 and s.top[0].token == s.token for s in stepped.steps)  # greedy: its own top-1


def _local_oracle(loaded, k: int) -> decoding.Oracle:
    """The in-process model as an oracle: each prefix's top-k (token id, log-probability), from a full forward."""
    prompt = loaded.tokenizer(PROMPT)["input_ids"]

    def ask(prefixes):
        out = []
        for prefix in prefixes:
            with torch.inference_mode():
                logits = loaded.model(torch.tensor([prompt + list(prefix)])).logits[0, -1].float()
            values, ids = torch.log_softmax(logits, -1).topk(k)
            out.append(list(zip(ids.tolist(), values.tolist(), strict=True)))
        return out

    return ask


@pytest.mark.parametrize("beams", [2, 3])
def test_client_beam_search_equals_the_local_one_on_the_same_distributions(local, beams: int) -> None:
    settings = DecodingSettings("beam", beams=beams, max_new_tokens=6)
    ends = eos_ids(local.model)
    per_beam = max(2, 1 + len(ends))  # transformers' K / B for this model's end tokens
    ours = decoding.OracleBeamDecoder(_local_oracle(local, per_beam * beams), settings, ends=ends,
                                      texts=lambda i: local.tokenizer.decode([i]), per_beam=per_beam)
    ours.run()
    reference = BeamDecoder(local.model, local.tokenizer, tuple(local.tokenizer(PROMPT)["input_ids"]), settings)
    reference.run()
    assert ours.tokens() == reference.token_ids
    assert ours.score == pytest.approx(reference.score, abs=1e-4)


def test_served_beam_search_and_sampling_run_from_the_client(cut_engine) -> None:
    ep = cut_engine.endpoint
    beam = decoding.generate(ep, PROMPT, DecodingSettings("beam", beams=2, max_new_tokens=3))
    assert len(beam.steps) == 3 and beam.finished and beam.device == "served"
    sample = DecodingSettings("top-k", temperature=0.9, top_k=10, max_new_tokens=3, seed=7)
    first, again = (decoding.generate(ep, PROMPT, sample) for _ in range(2))
    assert first.tokens == again.tokens  # seeded on the client: the same seed draws the same tokens
    assert any("server sends per step" in n.text for n in first.notices)


@pytest.mark.parametrize("prompt", ["", "   ", "x" * (limits.SERVED_PROMPT_CHARS + 1), "a\x00b"])
def test_a_bad_prompt_is_refused_before_any_request(prompt: str) -> None:
    from explorer.serving.endpoints import Endpoint

    closed = Endpoint("nowhere", "http://127.0.0.1:9/v1")  # nothing listens: a request would fail differently
    with pytest.raises(ExplorerError, match="prompt"):
        decoding.next_token(closed, prompt, 5)
