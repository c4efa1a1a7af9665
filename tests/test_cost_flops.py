"""FLOPs per token from the config (explorer.architecture.cost) against PyTorch's FlopCounterMode on the model itself.

Every catalog family whose attention is dense is run forward under ``torch.utils.flop_counter.FlopCounterMode``: on the
meta device at its published size (no memory, no time), or, where a model's forward reads a value (DeBERTa's relative
positions, BART's masks), on the CPU's fake tensors (shapes only, no arithmetic: the same counts as a real forward,
measured equal for DeBERTa-v2-xlarge, BART-large, M2M100 and DeBERTa-base at 2,048 tokens in 0.2-0.3 s instead of 2-9
s), or for real on the CPU where it reads a value into Python (XLM), each with one layer, a small vocabulary and eager
attention (the CPU's fused attention kernel is not counted by FlopCounterMode). The estimate must be within 3% in total
and for attention alone, at 512 tokens and at 2,048 (where attention dominates; a model whose positions stop at 512 gets
room for 2,048, which does not change its cost per token). Sparse families (Longformer, BigBird, GPT-Neo's and GPT-3's
local layers) are held to their own kernels' non-zero counts in test_patterns."""

from __future__ import annotations

import contextlib
import warnings

import pytest
import torch
from torch._subclasses.fake_tensor import DataDependentOutputException, FakeTensorMode
from torch.utils.flop_counter import FlopCounterMode

from explorer.architecture import build, catalog, cost
from explorer.architecture.modeltypes import is_encoder_decoder

TOLERANCE = 0.03
DENSE = ("full", "causal", "encoder-decoder", "disentangled")
# Gemma 3's local layers see 512 keys: at 512 tokens they are dense, so it is checked there too.
KEYS = [k for k in catalog.keys() if catalog.get_variant(k).attention in DENSE] + ["gemma3-270m"]
# Custom heads whose extra work is not per token (FastBERT's exits read [CLS]; SpanBERT's boundary head reads
# spans; an ELECTRA pair runs two networks): their whole-model totals are checked with a looser bound below.
COMPOSITE = {"fastbert", "spanbert", "electra-small", "electra-base", "bert2bert"}


def _attention_share(fc: FlopCounterMode) -> int:
    """FLOPs of the score and value products alone: batched matmuls and fused attention kernels."""
    names = ("bmm", "baddbmm", "_scaled_dot_product", "matmul")
    return sum(n for op, n in fc.get_flop_counts()["Global"].items() if any(k in str(op) for k in names))


def _counted(key: str, seq_len: int) -> tuple[float, float, cost.Cost] | None:
    """(measured FLOPs per token, measured attention per token, estimate)."""
    variant = catalog.get_variant(key)
    for where in ("meta", "fake", "cpu"):
        device = "meta" if where == "meta" else "cpu"
        data = catalog.variant_config(key)
        if device == "cpu":  # one layer is enough: the estimate is per layer (eager attention at 2,048: seconds)
            for field in ("num_hidden_layers", "encoder_layers", "decoder_layers", "n_layers", "num_layers",
                          "num_decoder_layers"):
                if field in data:
                    data[field] = 1
            data["attn_implementation"] = "eager"
            data["vocab_size"] = 1024  # the output layer is 2 x vocab x d per token in both counts: kept small
        for field in ("max_position_embeddings", "n_positions", "n_ctx"):  # room for 2,048 tokens: the per-token
            if isinstance(data.get(field), int) and data[field] < seq_len:  # cost does not depend on it
                data[field] = seq_len + 2  # (RoBERTa's positions start after its padding index)
        config = build.config_from_dict(data)
        fake = FakeTensorMode(allow_non_fake_inputs=True) if where == "fake" else contextlib.nullcontext()
        with fake:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = build.instantiate(config, variant.head, device, variant.extra).eval().requires_grad_(False)
            x = torch.full((1, seq_len), 5, dtype=torch.long, device=device)
            two = is_encoder_decoder(getattr(model, "config", config))  # BERT2BERT: a BERT config, an encoder-decoder
            inputs = {"input_ids": x, **({"decoder_input_ids": x} if two else {})}
            try:
                with FlopCounterMode(display=False) as fc, torch.no_grad():
                    model(**inputs)
            except (RuntimeError, NotImplementedError, DataDependentOutputException):  # a value read: next way
                if where == "cpu":
                    raise
                continue
        return fc.get_total_flops() / seq_len, _attention_share(fc) / seq_len, cost.per_token(
            model, config, seq_len, variant.attention)
    return None


@pytest.mark.parametrize("seq_len", [512, 2048])
@pytest.mark.parametrize("key", KEYS)
def test_flops_per_token_match_the_flop_counter(key: str, seq_len: int) -> None:
    if seq_len > 512 and catalog.get_variant(key).attention not in DENSE:
        pytest.skip("its local layers are sparse beyond 512 tokens: held to its kernel's non-zero counts")
    if seq_len > 512 and catalog.get_variant(key).extra.get("generator"):
        pytest.skip("its two networks are catalog variants of their own, each checked at 2,048")
    got = _counted(key, seq_len)
    assert got is not None
    measured, attention, estimate = got
    bound = 0.05 if key in COMPOSITE else TOLERANCE
    assert estimate.total == pytest.approx(measured, rel=bound), (estimate, measured)
    if key not in COMPOSITE and catalog.get_variant(key).attention != "disentangled":
        # the attention part alone: QK^T and AV (DeBERTa's relative-position projections are linear layers)
        assert estimate.attention_flops == pytest.approx(attention, rel=TOLERANCE), (estimate, attention)


def test_the_attention_width_is_heads_times_head_width_not_d_model() -> None:
    t5 = build.make_config("t5-11b")
    assert cost.attention_width(t5) == 128 * 128 != t5.d_model
    assert cost.attention_flops(t5, 512) == 4 * 16_384 * (48 * 512 + 24 * 512)
