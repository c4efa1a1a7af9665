"""Offloaded checkpoints per device: spread over (GPU,) CPU and disk, the logits, the fill-in scorer and the
next-token step equal the same weights loaded whole on that device in the same dtype."""

from __future__ import annotations

import pytest
import torch

from explorer.architecture.build import BUILD_LOCK
from explorer.runtime.offload import input_device, load_offloaded
from explorer.tasks.causal.scoring import PrefixScorer, naive_scores
from explorer.tasks.generation.nexttoken import forward_last
from tests.gpu.conftest import DEVICES, PLACES, TOLERANCE
from tests.gpu.peaked import place

IDS = [50256, 464, 3797, 3332, 319, 262, 2603, 290]  # "The cat sat on the mat and" in GPT-2 pieces


def _gpu_budget(directory, dtype: torch.dtype) -> int:
    """Bytes for GPU 0 that put the embedding and some decoder layers there and the rest on disk.

    accelerate keeps room on GPU 0 for the largest part still to place (here the untied head, as big as the
    embedding), so the budget is embedding + head + half the layers, in ``dtype``: a fixed 8 MB put all of a
    bfloat16 model on the GPU and none of a float32 one (seen on an H200)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    with BUILD_LOCK, torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(directory), dtype=dtype)

    def size(module: torch.nn.Module) -> int:
        return sum(p.numel() for p in module.parameters()) * dtype.itemsize

    return size(model.model.embed_tokens) + size(model.lm_head) + size(model.model.layers) // 2


@pytest.mark.parametrize("where", PLACES)
def test_spread_model_equals_the_whole_one(peaked_dir, tmp_path, where) -> None:
    device, dtype = where
    cpu = {"cpu": 400_000}  # bytes: less than the embedding (50257 x 32), so what misses the GPU goes to disk
    budget = cpu if device == "cpu" else {0: _gpu_budget(peaked_dir("gemma"), dtype), **cpu}
    spread = load_offloaded(peaked_dir("gemma"), "causal-lm", tmp_path / "off", max_memory=budget, dtype=dtype)
    assert "disk" in spread.placement() and spread.device == device
    whole = place(peaked_dir("gemma"), device, dtype, "gemma").model
    x = torch.tensor([IDS])
    with torch.inference_mode():
        a = spread.model(input_ids=x.to(input_device(spread.model))).logits.float().cpu().softmax(-1)
        b = whole(input_ids=x.to(input_device(whole))).logits.float().cpu().softmax(-1)
    tol = TOLERANCE[dtype]
    assert float((a - b).abs().max()) <= tol
    with torch.inference_mode():
        last = forward_last(spread.model, torch.tensor([IDS]))[0].softmax(-1)
        assert float((last - forward_last(whole, torch.tensor([IDS]))[0].softmax(-1)).abs().max()) <= tol
    middles = [(3797,), (3332, 319)]
    got = PrefixScorer(spread.model, IDS[:3]).scores(middles, IDS[4:])
    # log-probability sums over ~6 tokens: the per-value tolerance times the tokens (and the logits' scale)
    assert got == pytest.approx(naive_scores(whole, IDS[:3], middles, IDS[4:]), abs=tol * 100)


@pytest.mark.parametrize("device", DEVICES)
def test_a_model_that_fits_one_device_says_which(peaked_dir, tmp_path, device) -> None:
    budget = {0: 10**9, "cpu": 10**9} if device == "cuda" else {"cpu": 10**9}
    whole = load_offloaded(peaked_dir("gemma"), "causal-lm", tmp_path / "off", max_memory=budget)
    assert whole.placement() == {"0" if device == "cuda" else "cpu": 1} and whole.device == device
    assert input_device(whole.model).type == device
