"""What a text's perplexity costs before any window runs: its windows' work and the pace measured here.

A window's work is the tokens the model reads for it: a decoder reads its window once, a masked LM once per token
(each masked in turn), a served model is counted in characters. A forward costs about ``2 x P`` floating-point
operations per token read (P: the model's parameters, its output layer included: Gemma 3 270M's 262,144-way head
is 168M of them), so before any window has run here, a CPU's seconds are those operations over
:data:`TYPICAL_CPU_FLOPS`. Each window scored sets this process's pace for that model and device (seconds per
token read), which plans the next ones (:func:`explorer.runtime.cancel.room_for`). An accelerator or a served model
has no figure before its first window: its cost is said in tokens (characters) alone.

>>> c = Cost("m", 4_000, 2, 2_048, (2_048, 1_953), 0.01, "measured here", "cpu")
>>> round(c.seconds, 2), c.seconds_of(1)
(40.01, 19.53)
>>> c.said
'm: 4,000 tokens in 2 window(s) of at most 2,048, about 40 s (measured here)'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

from explorer.core.notices import Notice
from explorer.evaluation.score import Scorer
from explorer.runtime import cancel

__all__ = ["TYPICAL_CPU_FLOPS", "Cost", "Unit", "cost", "timed"]

# Gemma 3 270M's rolling perplexity measured on the 2 busy cores of CI: a 1,877-token window in 26.6 s, 38 GFLOP/s
TYPICAL_CPU_FLOPS = 40e9
_PACE: dict[tuple[str, str], float] = {}  # (model, device) -> seconds per token read, by the last window here


@dataclass(frozen=True)
class Unit:
    """One window: its job (its summed log-likelihood and tokens scored), the tokens the model reads for it, and
    the tokens (a served model's characters) it scores."""

    job: Callable[[], tuple[float, int]]
    work: int
    scored: int


@dataclass(frozen=True)
class Cost:
    """A text's perplexity before any work: what it scores, in how many windows, and the seconds where known."""

    model: str
    tokens: int  # tokens to score (characters for a served model)
    windows: int
    window: int  # tokens (characters) a window holds at most
    work: tuple[int, ...]  # per window: tokens the model reads
    per_token: float | None  # seconds per token read; None: no pace known here yet
    pace: str  # where the seconds come from
    device: str
    unit: str = "tokens"

    @property
    def seconds(self) -> float | None:
        return None if self.per_token is None else sum(self.work) * self.per_token

    def seconds_of(self, index: int) -> float:
        """Seconds window ``index`` is expected to take (0 when no pace is known: it is tried)."""
        return 0.0 if self.per_token is None else self.work[index] * self.per_token

    @property
    def said(self) -> str:
        """One line: "gemma3-270m: 25,112 tokens in 13 windows of at most 2,048, about 340 s (...)"."""
        time_said = f", about {_seconds(self.seconds)} ({self.pace})" if self.seconds is not None else f" ({self.pace})"
        return (f"{self.model}: {self.tokens:,} {self.unit} in {self.windows:,} window(s) of at most "
                f"{self.window:,}{time_said}")

    def against(self, budget: float) -> Notice:
        """The estimate said before the work on a page whose requests run ``budget`` seconds together."""
        if self.seconds is None or self.seconds <= budget:
            return Notice("info", f"Perplexity of {self.said}.")
        return Notice("stopped", f"Perplexity of {self.said}: more than the {budget:.0f} s this page spends on one "
                                 "request, so it scores the windows that fit, and running it again (the same text "
                                 "and model) continues from there. The command line scores the whole text at "
                                 "once (python -m explorer evaluate --model ... --text-file FILE).")

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["work"], out["seconds"] = list(self.work), None if self.seconds is None else round(self.seconds, 1)
        return out


def _seconds(value: float) -> str:
    """``"340 s"``, ``"2.5 s"``, ``"under 0.1 s"``."""
    return f"{value:,.0f} s" if value >= 10 else f"{value:.1f} s" if value >= 0.05 else "under 0.1 s"


def _parameters(scorer: Scorer) -> int | None:
    loaded = getattr(scorer, "loaded", None)
    return None if loaded is None else sum(int(p.numel()) for p in loaded.model.parameters())


def cost(scorer: Scorer, units: list[Unit], window: int, unit: str = "tokens") -> Cost:
    """The cost of ``units`` (a text's windows) under ``scorer``, from the pace measured here or the model's size."""
    device = scorer.where()["device"]
    per = _PACE.get((scorer.key, device))
    pace = "the pace of the last window measured here"
    if per is None and device == "cpu" and (params := _parameters(scorer)):
        per = 2 * params / TYPICAL_CPU_FLOPS
        pace = "from the model's size at a typical 2-core CPU's pace, before any window measured here"
    elif per is None:
        pace = f"no pace known on {device} before a first window here"
    return Cost(scorer.key, sum(u.scored for u in units), len(units), window, tuple(u.work for u in units), per,
                pace, device, unit)


def timed(plan: Cost, unit: Unit) -> tuple[float, int]:
    """Run ``unit``'s job, and keep its pace for the model and device of ``plan``."""
    began = cancel.now()  # the request's clock, which its budget is measured on
    out = unit.job()
    if unit.work > 0:
        _PACE[(plan.model, plan.device)] = (cancel.now() - began) / unit.work
    return out
