"""The fast one-token step: a static cache where the model has one, CUDA graphs only on CUDA, and the
same ids as ``generate`` (eager and ``cache_implementation="static"``) on tiny models with peaked heads."""

from __future__ import annotations

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, StaticCache

from explorer.tasks.generation import DecodingSettings
from explorer.tasks.generation.decoder import TokenDecoder
from explorer.tasks.generation.fastpath import make_cache, step_call, uses_cuda_graphs
from tests.tiny_gemma import load_tiny_gemma

PROMPT = "The cat sat on the mat and then"


@pytest.fixture(scope="module")
def tok():
    from explorer.tokenization import load_tokenizer

    return load_tokenizer("gpt2")


@pytest.fixture(scope="module")
def gpt2(tok):
    """A tiny random GPT-2 whose output layer is scaled up: a peaked distribution, so float rounding
    between cache layouts cannot swap the top two tokens."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=32, n_layer=2, n_head=2,
                                           eos_token_id=tok.eos_token_id, bos_token_id=tok.eos_token_id)).eval()
    with torch.no_grad():
        model.transformer.wte.weight.mul_(20.0)  # tied head: logits 20x sharper
    return model


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    return load_tiny_gemma(tmp_path_factory.mktemp("gemma"))


def _ours(model, tok, new: int) -> list[int]:
    decoder = TokenDecoder(model, tok, tuple(tok(PROMPT)["input_ids"]), DecodingSettings("greedy", max_new_tokens=new))
    return [s.token_id for s in decoder.run()]


def _generate(model, tok, new: int, **kw) -> list[int]:
    ids = torch.tensor([tok(PROMPT)["input_ids"]])
    with torch.inference_mode():
        out = model.generate(ids, max_new_tokens=new, do_sample=False, **kw)
    return out[0, ids.shape[1]:].tolist()


def test_decoders_get_a_static_cache_and_the_cpu_never_compiles(gpt2, gemma) -> None:
    for model in (gpt2, gemma.model):
        cache = make_cache(model, 40)
        assert isinstance(cache, StaticCache)
        assert not uses_cuda_graphs(model, cache)  # this is a CPU model
        assert step_call(model, cache) == model.__call__


def test_models_without_a_compileable_forward_keep_the_dynamic_cache(gpt2, monkeypatch) -> None:
    monkeypatch.setattr(type(gpt2), "_can_compile_fullgraph", False)
    assert make_cache(gpt2, 40) is None
    assert not uses_cuda_graphs(gpt2, None)


@pytest.mark.parametrize("name", ["gpt2", "gemma"])
def test_greedy_on_the_static_cache_equals_generate_eager_and_static(name: str, gpt2, gemma, tok) -> None:
    model = gpt2 if name == "gpt2" else gemma.model
    ours = _ours(model, tok, 20)  # 20 > Gemma's 4-token window: the sliding layers wrap
    assert ours == _generate(model, tok, 20)
    assert ours == _generate(model, tok, 20, cache_implementation="static")
    assert len(ours) == 20


def test_the_decoder_holds_a_static_cache_filled_in_place(gpt2, tok) -> None:
    decoder = TokenDecoder(gpt2, tok, tuple(tok(PROMPT)["input_ids"]), DecodingSettings("greedy", max_new_tokens=5))
    decoder.step()
    cache = decoder._cache
    assert isinstance(cache, StaticCache)
    keys = cache.layers[0].keys
    decoder.run()
    assert cache.layers[0].keys is keys  # the same buffer, written in place, every step
    assert int(cache.get_seq_length()) == len(tok(PROMPT)["input_ids"]) + 4  # the last token is never fed


@pytest.fixture(scope="module")
def neo(tok):
    """A tiny random GPT-Neo (a global and a local layer, an 8-token local window), peaked head."""
    from transformers import GPTNeoConfig, GPTNeoForCausalLM

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = GPTNeoForCausalLM(GPTNeoConfig(
            vocab_size=len(tok), max_position_embeddings=128, hidden_size=32, num_layers=2, num_heads=2,
            attention_types=[[["global", "local"], 1]], window_size=8, eos_token_id=tok.eos_token_id,
            bos_token_id=tok.eos_token_id)).eval()
    with torch.no_grad():
        model.transformer.wte.weight.mul_(20.0)
    return model


def _steps(model, tok, prompt: str, new: int) -> TokenDecoder:
    decoder = TokenDecoder(model, tok, tuple(tok(prompt)["input_ids"]), DecodingSettings("greedy", max_new_tokens=new))
    decoder.run()
    return decoder


def test_gpt_neo_takes_a_static_cache_within_its_local_window_only(neo) -> None:
    from explorer.tasks.generation.fastpath import dynamic_reason

    assert not neo._can_compile_fullgraph  # transformers 5.23: "needs a hybrid cache"
    assert isinstance(make_cache(neo, 8), StaticCache) and dynamic_reason(neo, 8) is None
    assert make_cache(neo, 9) is None
    reason = dynamic_reason(neo, 9)
    assert "GPT-Neo" in reason and "8-token local window" in reason and "9" in reason


def test_gpt_neo_within_its_window_gives_the_dynamic_cache_numbers(neo, tok) -> None:
    """Prompt (5 tokens) + 3 new = 8 positions: the static path's probabilities equal the dynamic cache's (up to
    float32 rounding: the keys are 8 slots long instead of 5)."""
    prompt = "one two three four five"
    assert len(tok(prompt)["input_ids"]) == 5
    static = _steps(neo, tok, prompt, 3)
    assert isinstance(static._cache, StaticCache)
    ids = torch.tensor([tok(prompt)["input_ids"]])
    with torch.inference_mode():
        out = neo(ids, use_cache=True)  # the dynamic cache, step by step
        cache, probs = out.past_key_values, [out.logits[0, -1].softmax(-1)]
        for step in static.steps[:-1]:
            out = neo(torch.tensor([[step.token_id]]), past_key_values=cache, use_cache=True)
            probs.append(out.logits[0, -1].softmax(-1))
    expected = [float(p[s.token_id]) for p, s in zip(probs, static.steps, strict=True)]
    assert [s.probability for s in static.steps] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("new", [3, 20])
def test_gpt_neo_greedy_equals_generate_inside_and_past_its_window(neo, tok, new: int) -> None:
    ids = torch.tensor([tok(PROMPT)["input_ids"]])
    with torch.inference_mode():
        ref = neo.generate(ids, max_new_tokens=new, do_sample=False)[0, ids.shape[1]:].tolist()
    decoder = _steps(neo, tok, PROMPT, new)
    assert decoder.token_ids == ref
    assert isinstance(decoder._cache, StaticCache) == (ids.shape[1] + new <= 8)


def test_on_a_gpu_the_dynamic_fallback_is_a_notice(neo, tok) -> None:
    from types import SimpleNamespace

    from explorer.tasks.generation import generate

    loaded = SimpleNamespace(model=neo, tokenizer=tok, key="tiny-neo", untrained=True, device="cuda", dtype="float32")
    long = generate(loaded, PROMPT, DecodingSettings("greedy", max_new_tokens=6))  # 8 prompt tokens + 6 > 8
    assert any("GPT-Neo keeps the dynamic KV cache" in t for t in long.notice_texts)
    beam = generate(loaded, PROMPT, DecodingSettings("beam", beams=2, max_new_tokens=6))
    assert not any("KV cache" in t for t in beam.notice_texts)  # beam search is on the dynamic cache by design
    loaded.device = "cpu"  # the CPU is eager whatever the cache: nothing to say
    assert not any("KV cache" in t for t in generate(loaded, PROMPT, DecodingSettings(max_new_tokens=6)).notice_texts)
