"""Memory of a model's weights: bytes per precision, and what fp32 training with Adam holds.

>>> memory_bytes(1_000)["fp16"], memory_bytes(1_000)["train_fp32_adam"]
(2000, 16000)
"""

from __future__ import annotations

__all__ = ["ADAM_BYTES", "BYTES", "memory_bytes"]

BYTES = {"fp32": 4, "fp16": 2, "int8": 1}
ADAM_BYTES = 16  # fp32 weights + gradients + two Adam moments, per parameter


def memory_bytes(params: int) -> dict[str, int]:
    """Weight memory per precision, plus fp32 training with Adam (weights+grads+2 moments)."""
    out = {p: params * b for p, b in BYTES.items()}
    out["train_fp32_adam"] = params * ADAM_BYTES
    return out
