"""What one claims benchmark measured, as plain numbers: the light half of :mod:`explorer.training.measurement`.

No torch here: the Published results page reads a committed measurement back
(:func:`explorer.papers.claims.load`) without loading a training stack.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Measurement", "VariantRun"]


@dataclass(frozen=True)
class VariantRun:
    """One trained run: its budget, held-out losses and probe score (None when not probed)."""

    objective: str
    label: str
    steps: int
    params: int
    tokens_seen: int
    flops: float
    seconds: float
    epochs: float  # share of the training windows seen (dynamic masking only differs after 1.0)
    heldout_loss_first: float
    heldout_loss: float  # the family's own total (MLM + NSP/SOP, or MLM + 50 x RTD): not comparable across families
    heldout_mlm_loss: float | None  # masked-LM part only: comparable across the masked-LM family
    probe: float | None = None
    probe_stderr: float | None = None


@dataclass(frozen=True)
class Measurement:
    """Everything one benchmark run measured, with the budget and the machine it ran on."""

    date: str
    size: str
    budget_steps: int
    seed: int
    batch_tokens: int
    seq_len: int
    device: str
    machine: str
    probe_spec: dict[str, object]
    variants: dict[str, VariantRun] = field(default_factory=dict)
    floors: dict[str, float] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)  # objective -> the loss family it needs
    speed: dict[str, float] | None = None  # teacher_ms, student_ms, ratio (teacher / student)
    teacher_probe: float | None = None  # the DistilBERT student's teacher on the same probe
    seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Measurement:
        variants = {k: VariantRun(**v) for k, v in data.get("variants", {}).items()}
        return Measurement(**{**data, "variants": variants})
