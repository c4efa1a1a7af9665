"""Offloaded checkpoints per device: spread over (GPU,) CPU and disk, the logits, the fill-in scorer and the
next-token step equal the same weights loaded whole on that device in the same dtype."""

from __future__ import annotations

import pytest
import torch

from explorer.runtime.offload import input_device, load_offloaded
from explorer.tasks.causal.scoring import PrefixScorer, naive_scores
from explorer.tasks.generation.nexttoken import forward_last
from tests.gpu.conftest import PLACES, TOLERANCE
from tests.gpu.peaked import place

IDS = [50256, 464, 3797, 3332, 319, 262, 2603, 290]  # "The cat sat on the mat and" in GPT-2 pieces


@pytest.mark.parametrize("where", PLACES)
def test_spread_model_equals_the_whole_one(peaked_dir, tmp_path, where) -> None:
    device, dtype = where
    # bytes: the embedding (50257 x 32, 3-6 MB) fits the GPU, the untied head of the same size does not: disk
    budget = {"cpu": 400_000} if device == "cpu" else {0: 8_000_000, "cpu": 400_000}
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
