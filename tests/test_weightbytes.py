"""explorer.architecture.weightbytes: weight bytes per precision and fp32 training with Adam."""

from __future__ import annotations

from explorer.architecture import weightbytes


def test_memory_per_precision() -> None:
    mem = weightbytes.memory_bytes(1000)
    assert (mem["fp32"], mem["fp16"], mem["int8"], mem["train_fp32_adam"]) == (4000, 2000, 1000, 16000)
