"""Decoding per device and dtype: every strategy step by step with its cache, equal to ``model.generate`` on the
same weights and dtype; the next-token table equal to a full forward; CPU and CUDA agree."""

from __future__ import annotations

import pytest
import torch

from explorer.runtime.offload import input_device
from explorer.tasks.generation import DecodingSettings, generate
from explorer.tasks.generation.nexttoken import next_token
from tests.gpu.conftest import AGREEMENT, CUDA_HALF, PLACES, TOLERANCE
from tests.gpu.peaked import place, same_ranking

PROMPT = "The cat sat on the mat and then"


@pytest.fixture(scope="module", params=PLACES)
def gemma(request, peaked_dir):
    return place(peaked_dir("gemma"), *request.param, "gemma")


def _reference(lm, **kwargs) -> list[int]:
    ids = torch.tensor([lm.tokenizer(PROMPT)["input_ids"]], device=input_device(lm.model))
    with torch.inference_mode():
        out = lm.model.generate(ids, max_new_tokens=10, **kwargs)
    return out[0, ids.shape[1]:].tolist()


def test_greedy_equals_generate(gemma) -> None:
    ours = generate(gemma, PROMPT, DecodingSettings("greedy", max_new_tokens=10))
    assert ours.token_ids == _reference(gemma, do_sample=False)


@pytest.mark.parametrize("beams", [2, 4])
def test_beam_equals_generate(gemma, beams: int) -> None:
    ours = generate(gemma, PROMPT, DecodingSettings("beam", beams=beams, max_new_tokens=10))
    assert ours.token_ids == _reference(gemma, do_sample=False, num_beams=beams)


@pytest.mark.parametrize("strategy", ["sample", "top-k", "top-p"])
def test_sampling_is_seeded_on_every_device(gemma, strategy: str) -> None:
    """Our sampler draws on the CPU with its own generator: the same seed gives the same tokens on any device
    (``generate`` draws with the device's global generator, so its tokens match ours only on the CPU)."""
    settings = DecodingSettings(strategy, temperature=0.8, top_k=20, top_p=0.5, max_new_tokens=8, seed=7)
    first, again = (generate(gemma, PROMPT, settings).token_ids for _ in range(2))
    assert first == again and len(first) == 8
    if gemma.device == "cpu":
        torch.manual_seed(7)
        extra = {"sample": {"top_k": 0}, "top-k": {"top_k": 20}, "top-p": {"top_k": 0, "top_p": 0.5}}[strategy]
        ids = torch.tensor([gemma.tokenizer(PROMPT)["input_ids"]])
        with torch.inference_mode():
            ref = gemma.model.generate(ids, max_new_tokens=8, do_sample=True, temperature=0.8, **extra)
        assert first == ref[0, ids.shape[1]:].tolist()


def test_each_cached_step_equals_a_full_forward(gemma) -> None:
    gen = generate(gemma, PROMPT, DecodingSettings("greedy", max_new_tokens=4))
    ids = torch.tensor([gemma.tokenizer(PROMPT)["input_ids"] + gen.token_ids], device=input_device(gemma.model))
    with torch.inference_mode():
        probs = gemma.model(ids).logits[0].float().softmax(-1).cpu()  # (T, V)
    start = ids.shape[1] - 4
    for i, step in enumerate(gen.steps):
        assert step.probability == pytest.approx(float(probs[start - 1 + i, step.token_id]),
                                                 abs=TOLERANCE[gemma.model.dtype])


def test_next_token_table_equals_a_full_forward(gemma) -> None:
    result = next_token(gemma, PROMPT, top_k=5)
    ids = torch.tensor([gemma.tokenizer(PROMPT)["input_ids"]], device=input_device(gemma.model))
    with torch.inference_mode():
        probs = gemma.model(ids).logits[0, -1].float().softmax(-1).cpu()
    ref = probs.topk(5)
    same_ranking([(c.token_id, c.probability) for c in result.candidates],
                 list(zip(ref.indices.tolist(), ref.values.tolist(), strict=True)), TOLERANCE[gemma.model.dtype])


@pytest.mark.parametrize("where", CUDA_HALF)
def test_cuda_next_token_agrees_with_the_cpu(peaked_dir, where) -> None:
    cpu = next_token(place(peaked_dir("gemma"), "cpu", torch.float32, "gemma"), PROMPT, top_k=5)
    gpu = next_token(place(peaked_dir("gemma"), *where, "gemma"), PROMPT, top_k=5)
    same_ranking([(c.token_id, c.probability) for c in gpu.candidates],
                 [(c.token_id, c.probability) for c in cpu.candidates], AGREEMENT[where[1]])


@pytest.mark.parametrize("where", [pytest.param(("cuda", torch.float32), id="cuda-float32",
                                                marks=CUDA_HALF[0].marks)])
def test_cuda_float32_greedy_ids_equal_the_cpu(peaked_dir, where) -> None:
    settings = DecodingSettings("greedy", max_new_tokens=10)
    cpu = generate(place(peaked_dir("gemma"), "cpu", torch.float32, "gemma"), PROMPT, settings)
    assert generate(place(peaked_dir("gemma"), *where, "gemma"), PROMPT, settings).token_ids == cpu.token_ids
