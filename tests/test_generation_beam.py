"""Beam search: the same ids as ``generate(num_beams=B, do_sample=False)``; the cache is reordered, not rebuilt."""

from __future__ import annotations

import pytest
import torch

from explorer.runtime.offload import input_device
from explorer.tasks.generation import DecodingSettings, generate
from explorer.tasks.generation.beam import BeamDecoder
from explorer.tasks.generation.prompt import encode_prompt
from tests.tiny_gemma import load_tiny_gemma

PROMPTS = ["The cat sat on the mat and then", "Once upon a time", "1, 2, 3,"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    # The CPU in float32: on a near-uniform random model half precision ties reorder beams (tests/gpu: per device)
    return load_tiny_gemma(tmp_path_factory.mktemp("gemma"), device="cpu")


def _reference(loaded, text: str, beams: int, new: int) -> list[int]:
    ids = torch.tensor([loaded.tokenizer(text)["input_ids"]], device=input_device(loaded.model))
    out = loaded.model.generate(ids, max_new_tokens=new, num_beams=beams, do_sample=False)
    return out[0, ids.shape[1]:].tolist()


@pytest.mark.parametrize("beams", [2, 3, 5])
@pytest.mark.parametrize("text", PROMPTS)
def test_beam_equals_generate(tiny, text: str, beams: int) -> None:
    ours = generate(tiny, text, DecodingSettings("beam", beams=beams, max_new_tokens=10))
    assert ours.token_ids == _reference(tiny, text, beams, 10)


def test_beam_with_early_end_of_sequence_equals_generate(tmp_path, tiny) -> None:
    """Hypotheses that finish early exercise the finished set, length penalty and stopping rule."""
    first = generate(tiny, PROMPTS[0], DecodingSettings("beam", beams=3, max_new_tokens=8)).token_ids
    stopping = load_tiny_gemma(tmp_path / "eos", eos_token_id=first[1], device="cpu")
    for beams in (2, 3, 4):
        ours = generate(stopping, PROMPTS[0], DecodingSettings("beam", beams=beams, max_new_tokens=8))
        assert ours.token_ids == _reference(stopping, PROMPTS[0], beams, 8)


def test_one_beam_is_greedy(tiny) -> None:
    greedy = generate(tiny, PROMPTS[1], DecodingSettings("greedy", max_new_tokens=6)).token_ids
    assert generate(tiny, PROMPTS[1], DecodingSettings("beam", beams=1, max_new_tokens=6)).token_ids == greedy


def test_prompt_runs_once_then_one_token_per_beam(tiny) -> None:
    seen: list[tuple[int, ...]] = []
    hook = tiny.model.get_input_embeddings().register_forward_hook(lambda m, args, out: seen.append(tuple(args[0].shape)))
    try:
        prompt = encode_prompt(tiny.tokenizer, PROMPTS[0], 256)
        decoder = BeamDecoder(tiny.model, tiny.tokenizer, prompt.ids, DecodingSettings("beam", beams=3, max_new_tokens=4))
        decoder.run()
    finally:
        hook.remove()
    assert seen[0] == (1, len(prompt.ids))
    assert set(seen[1:]) == {(3, 1)}
    assert decoder.finished and len(decoder.steps) == 4


def test_steps_carry_the_model_probability_of_each_chosen_token(tiny) -> None:
    gen = generate(tiny, PROMPTS[0], DecodingSettings("beam", beams=3, max_new_tokens=3))
    ids = torch.tensor([tiny.tokenizer(PROMPTS[0])["input_ids"] + gen.token_ids], device=input_device(tiny.model))
    with torch.inference_mode():
        probs = tiny.model(ids).logits[0].float().softmax(-1)  # (T, V)
    start = ids.shape[1] - 3
    for i, step in enumerate(gen.steps):
        assert step.probability == pytest.approx(float(probs[start - 1 + i, step.token_id]), abs=1e-5)
