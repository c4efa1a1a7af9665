"""One generated token as the page and the CLI show it: its probability and the alternatives.

``probability`` is always the model's own probability of that token at that step (softmax of
the raw logits, temperature 1), whatever strategy chose it, so strategies compare on one scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from explorer.core.handles import Tokenizer
from explorer.tasks.generation.nexttoken import token_text
from explorer.tasks.generation.strategy import TOP_ALTERNATIVES

__all__ = ["Alternative", "Step", "eos_ids", "make_step", "step_table"]


@dataclass(frozen=True)
class Alternative:
    """A token the model also considered at that step."""

    token: str
    token_id: int
    probability: float

    def to_dict(self) -> dict[str, object]:
        return {"token": self.token, "probability": round(self.probability, 8)}


@dataclass(frozen=True)
class Step:
    """One generated token, its model probability and the most likely tokens at that step."""

    token: str
    token_id: int
    probability: float
    top: tuple[Alternative, ...]

    def to_dict(self) -> dict[str, object]:
        return {"token": self.token, "token_id": self.token_id, "probability": round(self.probability, 8),
                "top": [a.to_dict() for a in self.top]}


def alternatives(tokenizer: Tokenizer, probs: torch.Tensor, k: int = TOP_ALTERNATIVES) -> tuple[Alternative, ...]:
    """The ``k`` most likely tokens of one distribution ``probs`` (V,)."""
    values, ids = probs.topk(min(k, probs.shape[-1]))
    return tuple(Alternative(token_text(tokenizer, i), int(i), float(p))
                 for p, i in zip(values.tolist(), ids.tolist(), strict=True))


def make_step(tokenizer: Tokenizer, probs: torch.Tensor, token_id: int,
              top: tuple[Alternative, ...] | None = None) -> Step:
    """The record of choosing ``token_id`` from the model distribution ``probs`` (V,)."""
    top = alternatives(tokenizer, probs) if top is None else top
    return Step(token_text(tokenizer, token_id), int(token_id), float(probs[token_id]), top)


def eos_ids(model: torch.nn.Module) -> tuple[int, ...]:
    """The tokens that end generation, as ``generate`` reads them (generation config first)."""
    gen = getattr(model, "generation_config", None)
    raw = getattr(gen, "eos_token_id", None)
    if raw is None:
        raw = getattr(model.config, "eos_token_id", None)
    if raw is None:
        return ()
    return tuple(int(i) for i in (raw if isinstance(raw, list | tuple) else [raw]))


def step_table(steps: list[Step] | tuple[Step, ...]) -> list[dict[str, object]]:
    """Rows for a table or a CSV: position, token, id, probability, the alternatives as text."""
    return [{"position": i + 1, "token": s.token, "token_id": s.token_id, "probability": s.probability,
             "alternatives": ", ".join(f"{a.token!r} {a.probability:.3f}" for a in s.top)}
            for i, s in enumerate(steps)]
