"""Token attribution: every shown token's share of the explained number, by one method, and its entry point.

:func:`attribute` runs one method on a loaded model: the question framed (:mod:`explorer.explain.framer`), its
cost estimated and checked against the request's budget before any work (:mod:`explorer.explain.cost`), then
the method's own run (one record per method: :mod:`explorer.explain.methods`). :func:`run` resolves and loads the
model first (the CLI and the page's cached wrapper). A served model's occlusion is
:func:`explorer.explain.served.attribute`; its gradients cannot be had (:data:`SERVED_INSIDES`).

``output`` is the explained number: the target's log-probability (a sum over its tokens), minus the foil's
when one is given; a sentence pair's cosine similarity. ``baseline_output`` is the same at integrated gradients'
baseline (every shown token replaced by padding), else None; ``completeness`` how far the scores' sum is from
``output - baseline_output``, relative (integrated gradients only).

Integrated gradients' steps are ``"auto"`` by default (:mod:`explorer.explain.methods.integrated_gradients`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice, texts
from explorer.explain import cost as costs
from explorer.explain import framer
from explorer.explain import target as targets
from explorer.explain import task as tasks
from explorer.explain.cost import Cost
from explorer.explain.methods import METHODS, Work, method_of
from explorer.explain.methods.integrated_gradients import AUTO, AUTO_GAP, AUTO_STEPS
from explorer.runtime import loading
from explorer.runtime.placement import ran_on
from explorer.runtime.resolve import ModelRef
from explorer.serving.backend import INSIDES

if TYPE_CHECKING:  # typing only: no runtime import of the loader's model types
    from explorer.runtime.loading import LoadedModel

__all__ = ["AUTO", "AUTO_GAP", "AUTO_STEPS", "DEFAULT_STEPS", "MAX_STEPS", "METHOD_NAMES", "SERVED_INSIDES",
           "Attribution", "Steps", "TokenScore", "attribute", "check_steps", "run"]

Steps = int | str  # a number of integrated gradients' steps, or AUTO
DEFAULT_STEPS: Steps = AUTO
MAX_STEPS = 512
METHOD_NAMES = {m.name: m.label for m in METHODS.values()}
SERVED_INSIDES = INSIDES + ", so only occlusion runs on it"


@dataclass(frozen=True)
class TokenScore:
    token: str
    score: float | None  # None: not reached (occlusion stopped by the request's budget)
    part: int = 0  # a sentence pair's second sentence is 1


@dataclass(frozen=True)
class Attribution:
    """One method's scores of one model's tokens (see the module docstring)."""

    model: str
    method: str
    task: str
    objective: str
    target: str | None
    foil: str | None
    output: float
    baseline_output: float | None
    completeness: float | None
    tokens: tuple[TokenScore, ...]
    steps: int | None = None
    seconds: float = 0.0
    cost: Cost | None = None
    notices: tuple[Notice, ...] = ()
    untrained: bool = False
    device: str = "cpu"
    device_name: str = "cpu"
    dtype: str = "float32"

    @property
    def stopped(self) -> bool:
        """Whether the request's budget cut it short (some tokens are left without a score)."""
        return any(n.kind == "stopped" for n in self.notices)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["tokens"] = [asdict(t) for t in self.tokens]
        out["notices"], out["cost"] = texts(self.notices), self.cost.to_dict() if self.cost else None
        return out


def check_steps(method: str, steps: object) -> Steps | None:
    """Integrated gradients' steps as asked (a whole number from 1 to :data:`MAX_STEPS`, or ``"auto"``; None
    for the other methods), or an ExplorerError."""
    if not method_of(method).stepped:
        return None
    n = DEFAULT_STEPS if steps is None else steps
    if n == AUTO:
        return AUTO
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_STEPS:
        raise ExplorerError(f"Integrated gradients' steps must be a whole number from 1 to {MAX_STEPS}, or "
                            f"{AUTO!r} (got {n!r}).")
    return n


def attribute(loaded: LoadedModel, task: str, text: str, target: str | None, method: str, *,
              foil: str | None = None, pair: str | None = None, steps: Steps | None = None,
              progress: Callable[[float, str], None] | None = None,
              span: tuple[int, int] | None = None) -> Attribution:
    """``method``'s score of every token of ``text`` for ``target`` (against ``foil``) on a loaded model
    (``span``: occlusion of the shown tokens ``first`` to ``last`` only, the others left without a score)."""
    record = method_of(method)
    n = check_steps(method, steps)
    frame = framer.build(loaded, task, text, target, foil, pair)
    first = AUTO_STEPS[0] if n == AUTO else int(n or 0)
    cost = costs.estimate(loaded.model, frame, method, first, loaded.device)
    costs.check(cost)  # before any work: a method that cannot stop halfway must fit the time left
    started = time.perf_counter()
    scores, output, base, complete, notes, used = record.compute(Work(loaded, frame, n or 0, cost, progress, span))
    seconds = time.perf_counter() - started
    if not notes and not record.stepped:  # integrated gradients record each of their rounds
        costs.record(cost, seconds, loaded.device)
    if used is not None and used != first:  # auto's last round is the one the scores come from
        cost = costs.estimate(loaded.model, frame, method, used, loaded.device)
    shown = tuple(TokenScore(s.text, v, s.part) for s, v in zip(frame.shown, scores, strict=True))
    return Attribution(loaded.key, method, frame.task, frame.objective,
                       frame.target.scored if frame.target else pair or target,
                       frame.foil.scored if frame.foil else None, output, base, complete, shown, used,
                       round(seconds, 3), cost, frame.notices + notes, loaded.untrained, **ran_on(loaded))


def run(ref: ModelRef, text: str, target: str | None, method: str, *, foil: str | None = None,
        pair: str | None = None, steps: Steps | None = None, device: str | None = None, dtype: str | None = None,
        progress: Callable[[float, str], None] | None = None, span: tuple[int, int] | None = None) -> Attribution:
    """:func:`attribute` after loading ``ref`` for what it predicts (:func:`explorer.explain.task.loading_task`);
    the text, target, foil, method and steps are checked before the model loads."""
    targets.check_question(text, target, foil)  # the served path's checks too (explorer.explain.served)
    check_steps(method_of(method).name, steps)
    loaded = loading.load_model(ref, tasks.loading_task(ref), device=device, dtype=dtype,
                                purpose="Why this prediction")
    task = tasks.of(ref.family, tasks.has_head(ref), text if isinstance(text, str) else "")
    result = attribute(loaded, task, text, target, method, foil=foil, pair=pair, steps=steps, progress=progress,
                       span=span)
    return replace(result, model=ref.spec)
