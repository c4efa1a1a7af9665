"""The key/value-cache calculator against the caches transformers really keeps (``DynamicCache``) on tiny random
models, and its arithmetic on every catalog variant."""

from __future__ import annotations

import pytest
import torch
import transformers

from explorer.architecture import catalog, kvcache
from explorer.core.errors import ExplorerError
from explorer.runtime import capacity
from explorer.runtime.resolve import resolve
from explorer.tasks.generation.cachelive import cache_tensors, measure
from explorer.tasks.generation.run import load_decoder
from tests.tiny_gemma import tiny_gemma_config


@pytest.fixture(scope="module")
def gemma() -> transformers.Gemma3ForCausalLM:
    torch.manual_seed(0)
    return transformers.Gemma3ForCausalLM(tiny_gemma_config(64, 0)).eval()  # window 4 on layers 0 and 1


def _prefilled(model: torch.nn.Module, n: int) -> int:
    with torch.no_grad():
        cache = model(input_ids=torch.randint(0, 64, (1, n)), use_cache=True).past_key_values
    return sum(t.bytes for t in cache_tensors(cache))


@pytest.mark.parametrize("context", [1, 2, 3, 4, 5, 9, 40])  # window 4: below it, at it and past it
def test_gemma3_bytes_equal_the_measured_cache_below_and_above_the_window(gemma, context) -> None:
    plan = kvcache.plan(gemma.config, context, "float32")
    assert plan.bytes == _prefilled(gemma, context)
    assert [layer.tokens for layer in plan.layers] == [min(context, 3), min(context, 3), context]


def test_gemma3_bytes_equal_the_cache_grown_token_by_token(gemma) -> None:
    cache, ids = None, torch.randint(0, 64, (1, 2))
    with torch.no_grad():
        for step in range(9):
            cache = gemma(input_ids=ids, past_key_values=cache, use_cache=True).past_key_values
            seen = 2 + step
            assert sum(t.bytes for t in cache_tensors(cache)) == kvcache.plan(gemma.config, seen).bytes, seen
            ids = torch.randint(0, 64, (1, 1))


def test_half_precision_halves_the_bytes(gemma) -> None:
    half = gemma.to(torch.bfloat16)
    try:
        assert _prefilled(half, 10) == kvcache.plan(half.config, 10, "bfloat16").bytes
    finally:
        gemma.float()


@pytest.mark.parametrize("context", [1, 7, 32])
def test_gpt2_bytes_equal_the_measured_cache(context) -> None:
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=64, n_embd=32, n_layer=3, n_head=4, n_positions=64)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    plan = kvcache.plan(cfg, context, "float32", "gpt2")
    assert plan.bytes == _prefilled(model, context) and plan.grouping == "MHA"
    assert plan.bytes_per_token == 2 * 3 * 4 * 8 * 4 == plan.bytes // context


def test_cached_and_uncached_greedy_generation_give_the_same_tokens() -> None:
    loaded = load_decoder(resolve("gemma3-270m"), device="cpu")  # the stand-in here: three layers, window 4
    m = measure(loaded, "The cache keeps every key", new_tokens=12, stop_at_eos=False)
    assert m.tokens_equal and len(m.cached_ids) == 12 and m.cached_text == m.uncached_text
    assert m.measured_bytes == m.calculated.bytes  # the cache left after generation, as the calculator counts it
    assert [t.kind for t in m.tensors] == ["sliding", "sliding", "full"] and m.tensors[0].shape[2] == 3
    out = m.to_dict()
    assert out["tokens_equal"] is True and out["measured_bytes"] == out["calculated_bytes"]


def test_the_bundled_gemmas_card_numbers() -> None:
    cfg = catalog.variant_config("gemma3-270m")
    plan = kvcache.plan(cfg, 4096, "bfloat16", "gemma3-270m")
    kinds = [layer.kind for layer in plan.layers]
    assert plan.grouping == "MQA" and kinds.count("local") == 15 and kinds.count("global") == 3
    assert plan.bytes_per_token == 18 * 2 * 1 * 256 * 2
    assert plan.bytes == (15 * 511 + 3 * 4096) * 2 * 256 * 2


@pytest.mark.parametrize("key", catalog.keys())
def test_every_variant_has_a_cache_plan_and_a_growing_curve(key) -> None:
    cfg = catalog.variant_config(key)
    plan = kvcache.plan(cfg, 100, "float16", key)
    assert plan.bytes > 0 and plan.bytes_per_token == capacity.kv_bytes_per_token(cfg, 2)
    series = kvcache.curve(cfg, "float16", key)
    assert list(series.bytes) == sorted(series.bytes) and series.lengths[-1] == (plan.max_context or 32_768)


@pytest.mark.parametrize("bad", [0, -3, kvcache.MAX_CONTEXT + 1, True, 2.5])
def test_a_bad_context_is_refused_in_words(bad) -> None:
    with pytest.raises(ExplorerError, match="whole number of tokens"):
        kvcache.plan(catalog.variant_config("gpt2"), bad)


def test_dtypes_and_their_aliases() -> None:
    assert kvcache.dtype_of("bf16") == ("bfloat16", 2) and kvcache.dtype_of("FP32") == ("float32", 4)
    with pytest.raises(ExplorerError, match="Unknown cache dtype"):
        kvcache.dtype_of("float8")


def test_a_config_without_sizes_is_refused() -> None:
    with pytest.raises(ExplorerError, match="names no layer"):
        kvcache.plan({"model_type": "mystery"}, 10)


def test_t5s_self_and_cross_attention_caches_equal_the_calculator() -> None:
    torch.manual_seed(0)
    cfg = transformers.T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                                num_heads=4, decoder_start_token_id=0)
    model = transformers.T5ForConditionalGeneration(cfg).eval()
    with torch.no_grad():
        out = model(input_ids=torch.randint(0, 64, (1, 9)), decoder_input_ids=torch.randint(0, 64, (1, 5)),
                    use_cache=True)
    tensors = cache_tensors(out.past_key_values)
    plan = kvcache.plan(cfg, 5, "float32", "t5", source=9)
    assert [t.kind for t in tensors] == ["full", "full", "cross", "cross"]
    assert sum(t.bytes for t in tensors) == plan.bytes


@pytest.mark.parametrize("context", [100, 511, 512, 700])  # the real window: 512 on 15 of its 18 layers
def test_the_real_gemmas_cache_equals_the_calculator(bundled_decoder, context) -> None:
    from explorer.runtime import loading
    from explorer.tasks.generation.cachelive import prefill

    loaded = loading.load_model(resolve(str(bundled_decoder)), "causal-lm", device="cpu", dtype="float32")
    tensors, plan = prefill(loaded, [2, *([651] * (context - 1))])
    assert sum(t.bytes for t in tensors) == plan.bytes
    assert sorted({t.shape[2] for t in tensors}) == sorted({min(context, 511), context})
