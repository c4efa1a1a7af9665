"""explorer.runtime.capacity: every cap from the device facts (passed in, so the GPU rules run on a CPU machine)."""

from __future__ import annotations

import pytest

from explorer.runtime import capacity as L

CPU = L.DeviceFacts("cpu", "cpu", 8 * L.GIB, 2)
H100 = L.DeviceFacts("cuda", "NVIDIA H100", 61 * L.GIB, 16)
SMALL_GPU = L.DeviceFacts("cuda", "small", 1 * L.GIB, 8)


def test_cpu_caps_are_exactly_the_old_ones() -> None:
    assert L.attention_tokens(CPU, 12, 12).value == 512
    assert L.attention_tokens(CPU, 18, 4).value == 724  # Gemma 3 270M
    assert L.attention_tokens(CPU, 1, 1).value == 1024
    assert L.prompt_tokens(CPU, 32_768, 1000).value == 1024 and L.prompt_tokens(CPU, 512, None).value == 512
    assert L.new_tokens(CPU).value == 200 and L.page_models(CPU).value == 8
    assert L.attention_ceiling(CPU) == 1024
    assert "kept at 512" in L.attention_tokens(CPU, 12, 12).reason and "2-core CPU" in L.new_tokens(CPU).reason


def test_old_names_stay_importable_with_the_cpu_values() -> None:
    from explorer.tasks.attention import MAX_TOKENS
    from explorer.tasks.attention.maps import viewer_limit
    from explorer.tasks.defaults import MAX_PAGE_MODELS
    from explorer.tasks.generation.strategy import MAX_NEW_TOKENS, MAX_PROMPT_TOKENS

    assert (MAX_TOKENS, MAX_PROMPT_TOKENS, MAX_NEW_TOKENS, MAX_PAGE_MODELS) == (1024, 1024, 200, 8)
    assert viewer_limit(72) == 724


def test_gpu_attention_reaches_4096_and_says_why() -> None:
    lim = L.attention_tokens(H100, 12, 12)
    assert 4096 <= lim.value <= L.GPU_MAX_ATTENTION
    assert lim.reason.startswith("cuda: 61.0 GiB free -> ") and f"{lim.value:,} tokens" in lim.reason
    assert L.attention_tokens(H100, 18, 4).value >= L.attention_tokens(H100, 12, 12).value  # fewer heads: longer
    assert L.attention_ceiling(H100) == L.GPU_MAX_ATTENTION


def test_gpu_with_little_memory_says_so_and_never_goes_below_the_cpu_rule() -> None:
    lim = L.attention_tokens(SMALL_GPU, 12, 12)
    assert 512 <= lim.value < 4096 and "too little free memory" in lim.reason


def test_encoder_decoders_keep_full_maps_on_a_gpu() -> None:
    lim = L.attention_tokens(H100, 6, 8, encoder_decoder=True)
    assert lim.value == L.viewer_limit(6 * 8 * 3) and "encoder-decoders" in lim.reason


def test_gpu_prompt_follows_the_context_and_the_kv_cache() -> None:
    kv = L.kv_bytes_per_token(_Cfg(), 2)  # 18 layers x 1 KV head x 256 wide x 2 (k, v) x bf16
    assert kv == 2 * 18 * 1 * 256 * 2
    assert L.prompt_tokens(H100, 32_768, kv).value == 32_768  # Gemma 3 270M: its whole context fits
    assert "whole context" in L.prompt_tokens(H100, 32_768, kv).reason
    tight = L.prompt_tokens(SMALL_GPU, 131_072, 1 << 20)  # 1 MiB a token: memory decides
    assert 1024 <= tight.value < 131_072 and "KV caches" in tight.reason
    assert L.new_tokens(H100).value > 200


@pytest.mark.parametrize(("facts", "expected"), [(H100, 15), (SMALL_GPU, 8),
                                                 (L.DeviceFacts("cuda", "big", 400 * L.GIB, 8), 24)])
def test_gpu_page_models(facts, expected) -> None:
    assert L.page_models(facts).value == expected


def test_device_facts_here_is_the_cpu() -> None:
    facts = L.device_facts("auto")
    assert facts.kind == "cpu" and facts.free_bytes > 0 and facts.cores >= 1  # no GPU on CI
    assert L.device_facts("meta").kind == "cpu"  # a model streamed from disk computes on the CPU


class _Cfg:
    num_hidden_layers, num_attention_heads, num_key_value_heads, hidden_size, head_dim = 18, 4, 1, 640, 256


def test_model_facts_are_those_of_the_device_the_model_computes_on() -> None:
    import torch

    assert L.model_facts(torch.nn.Linear(2, 2)).kind == "cpu"
    with torch.device("meta"):
        streamed = torch.nn.Linear(2, 2)  # all on disk (accelerate): its inputs, and its compute, are on the CPU
    assert L.model_facts(streamed).kind == "cpu"
