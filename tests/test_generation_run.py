"""Whole generations: strategies side by side with one seed, the same tokens as stepping."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.tasks.generation import STRATEGIES, DecodingSettings, generate, start
from explorer.tasks.generation.run import compare
from tests.tiny_gemma import load_tiny_gemma


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return load_tiny_gemma(tmp_path_factory.mktemp("gemma"))


def test_compare_runs_every_strategy_with_one_seed(tiny) -> None:
    runs = compare(tiny, "The cat", DecodingSettings(max_new_tokens=5, seed=2, beams=2))
    assert [g.settings.strategy for g in runs] == list(STRATEGIES)
    assert all(len(g.steps) == 5 and g.finished for g in runs)
    assert {g.settings.seed for g in runs} == {2}
    again = compare(tiny, "The cat", DecodingSettings(max_new_tokens=5, seed=2, beams=2), ["sample"])
    assert again[0].token_ids == runs[1].token_ids


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_stepping_gives_the_same_tokens_as_a_whole_run(tiny, strategy: str) -> None:
    settings = DecodingSettings(strategy, max_new_tokens=6, beams=2, seed=1)
    _, decoder = start(tiny, "Once upon", settings)
    decoder.run(until=3)
    assert not decoder.finished
    decoder.run()
    assert decoder.token_ids == generate(tiny, "Once upon", settings).token_ids


def test_text_and_repetition_of_a_generation(tiny) -> None:
    gen = generate(tiny, "a b c", DecodingSettings("greedy", max_new_tokens=8))
    assert gen.text == tiny.tokenizer.decode(gen.token_ids, skip_special_tokens=True)
    assert len(gen.repetition()) == 8


def test_bad_settings_fail_before_any_compute(tiny) -> None:
    with pytest.raises(ExplorerError, match="top-p"):
        generate(tiny, "x", DecodingSettings("top-p", top_p=2.0))
    with pytest.raises(ExplorerError, match="empty"):
        generate(tiny, "", DecodingSettings())


@pytest.fixture(scope="module")
def long_gpt2():
    """A tiny random GPT-2 that reads 4,096 positions (more than the CPU's 1,024-token prompt cap)."""
    from types import SimpleNamespace

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from explorer.tokenization import load_tokenizer

    tok = load_tokenizer("gpt2")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=4096, n_embd=16, n_layer=1,
                                           n_head=2)).eval()
    return SimpleNamespace(model=model, tokenizer=tok, key="tiny-gpt2", untrained=True, device="cpu",
                           dtype="float32")


def _on(monkeypatch, facts) -> None:
    """Inject the device facts every cap reads (the model itself stays on the CPU)."""
    from explorer.runtime import capacity

    monkeypatch.setattr(capacity, "device_facts", lambda device="auto": facts)


def test_on_a_cpu_the_caps_stay_1024_prompt_and_200_new_tokens(long_gpt2) -> None:
    text = "hello world " * 1500  # 3,001 tokens
    prompt, decoder = start(long_gpt2, text, DecodingSettings(max_new_tokens=200))
    assert len(prompt.ids) == 1024 and decoder.settings.max_new_tokens == 200
    (cut,) = prompt.notices
    assert "at most 1,024 here: cpu: kept at 1,024 prompt tokens" in cut.text
    with pytest.raises(ExplorerError, match="between 1 and 200 here"):
        start(long_gpt2, "Hi", DecodingSettings(max_new_tokens=201))


def test_on_a_gpu_prompts_grow_to_the_context_and_more_new_tokens_are_allowed(long_gpt2, monkeypatch) -> None:
    from explorer.runtime import capacity

    _on(monkeypatch, capacity.DeviceFacts("cuda", "NVIDIA H100", 61 * capacity.GIB, 16))
    prompt, decoder = start(long_gpt2, "hello world " * 1500, DecodingSettings("beam", beams=2, max_new_tokens=600))
    assert len(prompt.ids) == prompt.total_tokens > 3000 and prompt.notices == ()  # within 4,096 positions: whole
    assert decoder.settings.max_new_tokens == 600
    prompt, _ = start(long_gpt2, "hello world " * 2500, DecodingSettings(max_new_tokens=600))
    (cut,) = prompt.notices
    assert len(prompt.ids) == 4096 and "the model's context is 4,096 tokens" in cut.text
    with pytest.raises(ExplorerError, match="1,024 here .cuda: 61.0 GiB free"):
        start(long_gpt2, "Hi", DecodingSettings(max_new_tokens=1025))


def test_a_gpu_short_of_memory_cuts_prompts_where_the_kv_caches_fit(long_gpt2, monkeypatch) -> None:
    from explorer.runtime import capacity

    kv = capacity.kv_bytes_per_token(long_gpt2.model.config, 4)  # 2 x 1 layer x 2 heads x 8 wide x 4 bytes
    free = 2 * capacity.MAX_BEAMS * kv * 2000  # half of it holds 8 beams' caches of 2,000 tokens
    _on(monkeypatch, capacity.DeviceFacts("cuda", "small", free, 8))
    prompt, _ = start(long_gpt2, "hello world " * 1500, DecodingSettings())
    (cut,) = prompt.notices
    assert len(prompt.ids) == 2000 and "KV caches" in cut.text and "cuda:" in cut.text
