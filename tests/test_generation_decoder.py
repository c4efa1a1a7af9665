"""Greedy and sampled decoding: the same ids as transformers' generate, the KV cache reused."""

from __future__ import annotations

import pytest
import torch

from explorer.runtime.offload import input_device
from explorer.runtime.resolve import resolve
from explorer.tasks.generation import DecodingSettings, generate
from explorer.tasks.generation.decoder import TokenDecoder
from explorer.tasks.generation.prompt import encode_prompt
from tests.tiny_gemma import load_tiny_gemma

PROMPT = "The cat sat on the mat and then"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    # The CPU in float32: equal ids on a near-uniform random model need exact arithmetic, and generate samples
    # with the global (device) generator. tests/gpu/test_generation.py runs these paths per device.
    return load_tiny_gemma(tmp_path_factory.mktemp("gemma"), device="cpu")


def _ids(loaded) -> torch.Tensor:
    return torch.tensor([loaded.tokenizer(PROMPT)["input_ids"]], device=input_device(loaded.model))


def _new(loaded, out: torch.Tensor) -> list[int]:
    return out[0, _ids(loaded).shape[1]:].tolist()


def test_greedy_equals_generate_without_sampling(tiny) -> None:
    ours = generate(tiny, PROMPT, DecodingSettings("greedy", max_new_tokens=15))
    ref = tiny.model.generate(_ids(tiny), max_new_tokens=15, do_sample=False)
    assert ours.token_ids == _new(tiny, ref)
    assert len(ours.token_ids) == 15 and ours.finished


@pytest.mark.parametrize(("strategy", "extra"), [
    ("sample", {"top_k": 0}),  # generate's own default would add top_k=50
    ("top-k", {"top_k": 20}),
    ("top-p", {"top_k": 0, "top_p": 0.5}),
])
def test_sampling_equals_generate_with_the_same_seed(tiny, strategy: str, extra: dict) -> None:
    settings = DecodingSettings(strategy, temperature=0.8, top_k=20, top_p=0.5, max_new_tokens=12, seed=7)
    ours = generate(tiny, PROMPT, settings)
    torch.manual_seed(7)
    ref = tiny.model.generate(_ids(tiny), max_new_tokens=12, do_sample=True, temperature=0.8, **extra)
    assert ours.token_ids == _new(tiny, ref)


def test_sampling_is_reproducible_by_seed_and_changes_with_it(tiny) -> None:
    runs = [generate(tiny, PROMPT, DecodingSettings("sample", max_new_tokens=10, seed=s)).token_ids
            for s in (3, 3, 4)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_sampling_leaves_the_global_random_state_alone(tiny) -> None:
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    generate(tiny, PROMPT, DecodingSettings("sample", max_new_tokens=5, seed=9))
    assert torch.equal(torch.rand(1), before)


def test_temperature_zero_gives_the_greedy_tokens(tiny) -> None:
    greedy = generate(tiny, PROMPT, DecodingSettings("greedy", max_new_tokens=8)).token_ids
    cold = generate(tiny, PROMPT, DecodingSettings("top-p", temperature=0, max_new_tokens=8))
    assert cold.token_ids == greedy
    assert [n.kind for n in cold.notices] == ["info"]


def test_prefix_is_run_once_then_one_token_per_step(tiny) -> None:
    seen: list[tuple[int, ...]] = []
    hook = tiny.model.get_input_embeddings().register_forward_hook(
        lambda m, args, out: seen.append(tuple(args[0].shape)))
    try:
        prompt = encode_prompt(tiny.tokenizer, PROMPT, 256)
        decoder = TokenDecoder(tiny.model, tiny.tokenizer, prompt.ids, DecodingSettings("greedy", max_new_tokens=4))
        for _ in range(4):
            decoder.step()
    finally:
        hook.remove()
    assert seen == [(1, len(prompt.ids)), (1, 1), (1, 1), (1, 1)]
    assert decoder.finished and decoder.step() is None


def test_stops_at_end_of_sequence_like_generate(tmp_path, tiny) -> None:
    greedy = generate(tiny, PROMPT, DecodingSettings("greedy", max_new_tokens=10)).token_ids
    eos = greedy[2]  # make the third greedy token the end-of-sequence token
    stopping = load_tiny_gemma(tmp_path / "eos", eos_token_id=eos, device="cpu")
    ours = generate(stopping, PROMPT, DecodingSettings("greedy", max_new_tokens=10))
    ref = stopping.model.generate(_ids(stopping), max_new_tokens=10, do_sample=False)
    assert ours.token_ids == _new(stopping, ref) == greedy[:3]
    assert ours.finished


def test_each_step_records_the_model_probability_and_alternatives(tiny) -> None:
    gen = generate(tiny, PROMPT, DecodingSettings("greedy", max_new_tokens=3))
    ids = _ids(tiny)
    with torch.inference_mode():
        probs = tiny.model(ids).logits[0, -1].float().softmax(-1)
    first = gen.steps[0]
    assert first.probability == pytest.approx(float(probs.max()), abs=1e-6)
    assert first.top[0].token_id == first.token_id  # greedy picks the top alternative
    assert len(first.top) == 5 and first.top[0].probability >= first.top[-1].probability


@pytest.mark.slow
def test_real_gemma_greedy_equals_generate() -> None:
    from explorer.tasks.generation import load_decoder

    loaded = load_decoder(resolve("gemma3-270m"))
    ours = generate(loaded, "The capital of France is", DecodingSettings("greedy", max_new_tokens=5))
    ids = torch.tensor([loaded.tokenizer("The capital of France is")["input_ids"]], device=input_device(loaded.model))
    ref = loaded.model.generate(ids, max_new_tokens=5, do_sample=False)  # on its device (CUDA, bf16 on a GPU)
    assert ours.token_ids == ref[0, ids.shape[1]:].tolist()
