"""DeBERTa's split on its real modules, per device: softmax(c2c + c2p + p2c) equals the module's own attention
and c2p + p2c its own bias; CPU and CUDA agree (float32 on both)."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.papers.mechanisms import deberta
from tests.gpu.conftest import AGREEMENT, DEVICES, PLACES, TOLERANCE

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


@pytest.fixture(scope="module")
def distill_cpu():
    from explorer.papers.mechanisms import distillation

    return (distillation.triple_loss(TEXT, device="cpu", dtype="float32"),
            distillation.layerwise_loss(TEXT, device="cpu", dtype="float32"))


@pytest.mark.parametrize("where", PLACES)
def test_distillation_runs_on_the_placement_and_agrees_with_the_cpu(where, distill_cpu) -> None:
    """Teacher and students run where asked, in that dtype; the losses (taken in float32) equal a recomputation
    from the returned tensors and agree with the CPU's float32 ones."""
    from explorer.papers.mechanisms import distillation

    device, dtype = where
    name = str(dtype).removeprefix("torch.")  # the placement API takes names
    t = distillation.triple_loss(TEXT, device=device, dtype=name)
    lw = distillation.layerwise_loss(TEXT, device=device, dtype=name)
    assert (t.device, t.dtype, lw.device, lw.dtype) == (device, name, device, name)
    assert t.ce == pytest.approx(distillation.soft_loss(t.teacher_logits, t.student_logits, 2.0), abs=TOLERANCE[dtype])
    assert lw.score_check < TOLERANCE[dtype]  # our Q K^T / sqrt(d) is what the modules softmax, in their dtype
    cpu_t, cpu_lw = distill_cpu
    for ours, ref in ((t.ce, cpu_t.ce), (t.mlm, cpu_t.mlm), (t.cos, cpu_t.cos), (lw.embedding, cpu_lw.embedding),
                      (lw.prediction, cpu_lw.prediction), *zip(lw.attention, cpu_lw.attention, strict=True),
                      *zip(lw.hidden, cpu_lw.hidden, strict=True)):
        assert ours == pytest.approx(ref, abs=AGREEMENT[dtype], rel=AGREEMENT[dtype])
    assert t.teacher_logits.dtype == np.float32 and lw.student_scores.dtype == np.float32
