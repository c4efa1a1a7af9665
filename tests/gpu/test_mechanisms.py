"""DeBERTa's split on its real modules, per device: softmax(c2c + c2p + p2c) equals the module's own attention
and c2p + p2c its own bias; CPU and CUDA agree (float32 on both)."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.papers.mechanisms import deberta
from tests.gpu.conftest import AGREEMENT, DEVICES, TOLERANCE

TEXT = "Paris is the capital of France, and Rome is the capital of Italy."


@pytest.mark.parametrize("key", ["deberta-v3-base", "deberta-base"])
@pytest.mark.parametrize("device", DEVICES)
def test_split_equals_the_modules_own_attention(key: str, device: str) -> None:
    import torch

    s = deberta.split_attention(key, TEXT, device=device, dtype="float32")
    assert s.max_prob_error < TOLERANCE[torch.float32] / 10 and s.max_bias_error < TOLERANCE[torch.float32] / 10
    assert s.c2c.dtype == np.float32 and s.relative.dtype.kind == "i"


@pytest.mark.parametrize("device", [p for p in DEVICES if p.id == "cuda"])
def test_cuda_split_agrees_with_the_cpu(device: str) -> None:
    import torch

    cpu, gpu = (deberta.split_attention("deberta-v3-base", TEXT, device=d, dtype="float32") for d in ("cpu", device))
    for a, b in ((cpu.c2c, gpu.c2c), (cpu.c2p, gpu.c2p), (cpu.p2c, gpu.p2c), (cpu.model_probs, gpu.model_probs)):
        assert float(np.abs(a - b).max()) <= AGREEMENT[torch.float32]
    assert np.array_equal(cpu.relative, gpu.relative)
