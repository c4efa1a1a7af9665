"""A run's record: one shape for what ``pretrain --json`` prints, what the Lab draws and what a checkpoint keeps
as ``lab.json``.

The Lab redraws every second while a run trains, so its record leaves out the corpus counts (splitting a 6 MB
text into words each second would be the slow part); everything else is the same.

>>> from explorer.training.trainer import Plan
>>> rec = of(Plan("mlm"))  # queued, not built yet: an empty record of the same shape
>>> rec.steps, rec.to_dict()["eval"]
(0, {'first': None, 'last': None, 'history': [], 'probe': None})
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from explorer.training import models

if TYPE_CHECKING:  # the trainer imports torch; a record is read where it may not be loaded
    from explorer.training.trainer import Plan, Run

__all__ = ["Record", "of"]


@dataclass(frozen=True)
class Record:
    """Budget spent, curves and outcomes of one run (lists are copies: a worker may still be appending)."""

    objective: str
    size: str
    params: int | None = None
    steps: int = 0
    tokens_seen: int = 0
    flops: float = 0.0
    seconds: float = 0.0
    losses: tuple[tuple[int, float], ...] = ()
    evals: tuple[dict[str, float], ...] = ()
    probe: dict[str, object] | None = None  # explorer.training.downstream.ProbeResult.to_dict()
    exits: dict[str, object] | None = None  # explorer.training.exits.Report.to_dict(), when exits were trained
    corpus: dict[str, object] | None = None
    seed: int | None = None
    device: str | None = None
    out: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON: ``{objective, size, params, steps, tokens_seen, flops, seconds, losses, eval, corpus, seed,
        device, out}`` (+ ``exits`` when trained); ``eval`` holds the first, last and every held-out evaluation."""
        evals = list(self.evals)
        out: dict[str, object] = {
            "objective": self.objective, "size": self.size, "params": self.params, "steps": self.steps,
            "tokens_seen": self.tokens_seen, "flops": self.flops, "seconds": self.seconds,
            "losses": [[s, v] for s, v in self.losses],
            "eval": {"first": evals[0] if evals else None, "last": evals[-1] if evals else None, "history": evals,
                     "probe": self.probe},
            "corpus": self.corpus, "seed": self.seed, "device": self.device, "out": self.out}
        if self.exits is not None:
            out["exits"] = self.exits
        return out


def of(plan: Plan, run: Run | None = None, *, out: str | None = None, probe: dict[str, object] | None = None,
       exits: dict[str, object] | None = None, corpus: bool = True) -> Record:
    """The record of ``plan``'s ``run`` (None: not built yet), with its probe and exits reports and where it was
    saved; ``corpus=False`` leaves out the corpus counts (the Lab's redraws)."""
    if run is None:
        return Record(plan.objective, plan.size, probe=probe, exits=exits, seed=plan.seed, device=plan.device, out=out)
    return Record(
        run.recipe.name, run.plan.size, models.parameters(run.model), run.step, run.tokens_seen, run.flops,
        round(run.seconds, 3), tuple((s, round(v, 5)) for s, v in list(run.losses)), tuple(list(run.evals)),
        probe, exits, run.corpus.to_dict() if corpus else None, run.plan.seed, run.plan.device, out)
