"""explorer.architecture.cost: per-token FLOPs (Kaplan et al.) and attention memory against sequence length."""

from __future__ import annotations

from explorer.architecture import build, catalog, cost


def _config(key: str):
    return build.config_from_dict(catalog.variant_config(key))


def test_bert_base_matmul_flops_are_twice_the_non_embedding_weights() -> None:
    config = _config("bert-base")
    model = build.instantiate(config, "base")
    c = cost.per_token(model, config, 512, "full")
    assert c.total == c.matmul_flops + c.attention_flops
    assert 2 * 80_000_000 < c.matmul_flops < 2 * 90_000_000  # 12 layers x 7.1M non-embedding weights, x2
    assert c.attention_flops == 4 * 12 * 768 * 512  # QK^T and AV: 2 * 2 * layers * d * context


def test_full_attention_memory_is_quadratic_and_windowed_is_linear() -> None:
    bert, lf = _config("bert-base"), _config("longformer")
    assert cost.attention_memory(bert, 1024, "full") == 4 * cost.attention_memory(bert, 512, "full")
    ratio = cost.attention_memory(lf, 16384, "sliding-window+global") / cost.attention_memory(
        lf, 8192, "sliding-window+global")
    assert 1.9 < ratio < 2.1


def test_causal_context_averages_half_the_sequence() -> None:
    gpt2 = _config("gpt2")
    assert cost.context("causal", 1024, gpt2) == (1024 + 1) / 2
    assert cost.context("full", 1024, gpt2) == 1024


def test_to_dict_has_the_total() -> None:
    config = _config("t5-small")
    d = cost.per_token(build.instantiate(config, "seq2seq"), config, 128, "full").to_dict()
    assert d["total"] == d["matmul_flops"] + d["attention_flops"] and d["seq_len"] == 128


def test_albert_flops_count_the_shared_layer_twelve_times() -> None:
    config = _config("albert-base")
    albert = build.instantiate(config, "base")
    layer = sum(p.numel() for n, p in albert.named_parameters() if "albert_layer_groups" in n and p.dim() == 2)
    assert cost.matmul_flops(albert, config) >= 2 * 12 * layer
