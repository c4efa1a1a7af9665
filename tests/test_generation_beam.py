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
    hook = tiny.model.get_input_embeddings().register_forward_hook(
        lambda m, args, out: seen.append(tuple(args[0].shape)))
    try:
        prompt = encode_prompt(tiny.tokenizer, PROMPTS[0], 256)
        decoder = BeamDecoder(tiny.model, tiny.tokenizer, prompt.ids,
                              DecodingSettings("beam", beams=3, max_new_tokens=4))
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


class _Reads(torch.overrides.TorchFunctionMode):
    """Records every call that reads tensor data back to Python or the CPU (a sync on a GPU)."""

    READS = {"cpu", "tolist", "item", "numpy", "__bool__", "__float__", "__int__", "__index__"}

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.paused = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        moves = name == "to" and args[0].device.type != "cpu" and any(  # a copy to the CPU from elsewhere
            str(a) == "cpu" for a in (*args[1:], *(kwargs or {}).values()))
        if not self.paused and (name in self.READS or moves):
            self.calls.append(name)
        return func(*args, **(kwargs or {}))


def test_each_expansion_reads_back_once_and_keeps_the_cache(tiny, monkeypatch) -> None:
    """The bookkeeping stays where the logits are: outside the model's forward, one expansion is exactly one
    device -> CPU copy (``cpu`` then ``tolist`` of one small packed tensor), and the KV cache is one object,
    reordered in place across steps, never rebuilt."""
    from explorer.tasks.generation import beam as beam_module

    reads = _Reads()
    real_forward = beam_module.forward_last

    def forward(*args, **kwargs):
        assert kwargs.get("on_device") is True  # the logits are not copied to the CPU
        reads.paused = True  # the model's own forward is transformers' business
        try:
            return real_forward(*args, **kwargs)
        finally:
            reads.paused = False

    monkeypatch.setattr(beam_module, "forward_last", forward)
    prompt = encode_prompt(tiny.tokenizer, PROMPTS[0], 256)
    decoder = BeamDecoder(tiny.model, tiny.tokenizer, prompt.ids, DecodingSettings("beam", beams=3, max_new_tokens=5))
    decoder.step()
    cache = decoder._cache
    for _ in range(4):
        reads.calls.clear()
        with reads:
            decoder.step()
        assert reads.calls == ["cpu", "tolist"]
        assert decoder._cache is cache
    assert decoder.finished and cache.layers[0].keys.shape[0] == 3  # (B, heads, T, d): one row per beam


@pytest.fixture(scope="module")
def gpt2():
    """A tiny random GPT-2 (another cache layout and a 50k vocabulary) with its real tokenizer."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from explorer.tokenization import load_tokenizer

    tok = load_tokenizer("gpt2")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=32, n_layer=2, n_head=2,
                                           eos_token_id=tok.eos_token_id, bos_token_id=tok.eos_token_id)).eval()
    return model, tok


@pytest.mark.parametrize("beams", [1, 2, 4, 8])
def test_beam_equals_generate_on_gpt2(gpt2, beams: int) -> None:
    model, tok = gpt2
    prompt = tuple(tok(PROMPTS[0])["input_ids"])
    ours = BeamDecoder(model, tok, prompt, DecodingSettings("beam", beams=beams, max_new_tokens=12)).run()
    with torch.inference_mode():
        ref = model.generate(torch.tensor([prompt]), max_new_tokens=12, num_beams=beams, do_sample=False)
    assert [s.token_id for s in ours] == ref[0, len(prompt):].tolist()


def test_alternatives_are_the_beams_own_top_five(tiny) -> None:
    """Each step's alternatives are the five most likely tokens of the beam it extends, best first."""
    gen = generate(tiny, PROMPTS[1], DecodingSettings("beam", beams=3, max_new_tokens=4))
    ids = torch.tensor([tiny.tokenizer(PROMPTS[1])["input_ids"] + gen.token_ids])
    with torch.inference_mode():
        probs = tiny.model(ids).logits[0].float().softmax(-1)  # (T, V)
    start = ids.shape[1] - 4
    for i, step in enumerate(gen.steps):
        top = probs[start - 1 + i].topk(5)
        assert [a.token_id for a in step.top] == top.indices.tolist()
        assert [a.probability for a in step.top] == pytest.approx(top.values.tolist(), abs=1e-5)
