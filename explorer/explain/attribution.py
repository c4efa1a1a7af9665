"""Token attribution: every shown token's share of the explained number, by one method, and its entry point.

:func:`attribute` runs one method on a loaded model: the question framed (:mod:`explorer.explain.framer`), its
cost estimated and checked against the request's budget before any work (:mod:`explorer.explain.cost`), then
gradient norm, gradient x input, integrated gradients (captum) or occlusion. :func:`run` resolves and loads the
model first (the CLI and the page's cached wrapper). A served model's occlusion is
:func:`explorer.explain.served.attribute`; its gradients cannot be had (:data:`SERVED_INSIDES`).

``output`` is the explained number: the target's log-probability (a sum over its tokens), minus the foil's
when one is given; a sentence pair's cosine similarity. ``baseline_output`` is the same at integrated gradients'
baseline (every shown token replaced by padding), else None; ``completeness`` how far the scores' sum is from
``output - baseline_output``, relative (integrated gradients only).

Integrated gradients' steps are ``"auto"`` by default: :data:`AUTO_STEPS` are tried in turn until the scores
sum to the difference within :data:`AUTO_GAP` (a contrast of two answers needed 64 steps where one answer needed
16), each round only when it fits the request's time left; the steps used and the gap reached are said.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice, texts
from explorer.explain import cost as costs
from explorer.explain import framer, gradients, integrated, occlusion
from explorer.explain import target as targets
from explorer.explain import task as tasks
from explorer.explain.cost import METHODS, Cost
from explorer.explain.frame import Frame
from explorer.runtime import cancel, loading
from explorer.runtime.placement import ran_on
from explorer.runtime.resolve import ModelRef

if TYPE_CHECKING:  # typing only: no runtime import of the loader's model types
    from explorer.runtime.loading import LoadedModel

__all__ = ["AUTO", "AUTO_GAP", "AUTO_STEPS", "DEFAULT_STEPS", "MAX_STEPS", "METHOD_NAMES", "SERVED_INSIDES",
           "Attribution", "Steps", "TokenScore", "attribute", "check_steps", "run"]

AUTO = "auto"
Steps = int | str  # a number of integrated gradients' steps, or AUTO
DEFAULT_STEPS: Steps = AUTO
AUTO_STEPS = (16, 32, 64, 128, 256)  # each round about doubles the work: the last decides the time
AUTO_GAP = 0.01  # the completeness auto asks for: the scores sum to the difference within 1%
MAX_STEPS = 512
METHOD_NAMES = {"grad": "gradient norm", "grad-input": "gradient x input", "ig": "integrated gradients",
                "occlusion": "occlusion (leave one token out)"}
SERVED_INSIDES = ("a served model's insides (its layers and gradients) are not available: the engine sends only "
                  "text and log-probabilities, so only occlusion runs on it")


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


Scores = tuple[list[float | None], float, float | None, float | None, tuple[Notice, ...], int | None]


def _scores(loaded: LoadedModel, frame: Frame, method: str, steps: Steps, cost: Cost,
            progress: Callable[[float, str], None] | None, span: tuple[int, int] | None) -> Scores:
    """(scores, output, baseline output, completeness, notices, integrated gradients' steps used) of ``method``."""
    model = loaded.model
    if method in ("grad", "grad-input"):
        grad, emb, value = gradients.embedding_gradient(model, frame)
        found = gradients.grad_norm(frame, grad) if method == "grad" else gradients.grad_input(frame, grad, emb)
        return list[float | None](found), value, None, None, (), None
    if method == "ig":
        return _integrated(loaded, frame, steps, cost)
    occluded = occlusion.occlusion(model, frame, max(1, cost.rows // len(frame.rows)), progress, span)
    return occluded.scores, occluded.output, None, None, occluded.notices, None


def _integrated(loaded: LoadedModel, frame: Frame, steps: Steps, cost: Cost) -> Scores:
    """Integrated gradients at ``steps``, or at each of :data:`AUTO_STEPS` in turn until complete within
    :data:`AUTO_GAP` (a round that would not fit the time left is not started)."""
    rounds = AUTO_STEPS if steps == AUTO else (int(steps),)
    done, used, notes = None, 0, []
    for n in rounds:
        plan = cost if n == rounds[0] else costs.estimate(loaded.model, frame, "ig", n, loaded.device)
        if done is not None and not cancel.room_for(plan.seconds or 0.0):
            notes.append(Notice("stopped", f"Integrated gradients stopped at {used} steps: {n} more would take "
                                           f"about {plan.seconds or 0:.0f} s, past this request's time left."))
            break
        began = time.perf_counter()
        done, used = integrated.integrated(loaded.model, frame, n, max(1, plan.rows // len(frame.rows))), n
        costs.record(plan, time.perf_counter() - began, loaded.device)
        if done.completeness <= AUTO_GAP:
            break
    assert done is not None
    if steps == AUTO:
        notes.append(_auto_notice(used, done.completeness))
    if done.baseline_output > done.output:
        notes.append(Notice("info", f"The baseline (the text's tokens replaced by padding) scores higher than the "
                                    f"text ({done.baseline_output:.3f} against {done.output:.3f}), so the scores sum "
                                    "to a negative number: a negative score is a token's share of that fall."))
    return list[float | None](done.scores), done.output, done.baseline_output, done.completeness, tuple(notes), used


def _auto_notice(used: int, gap: float) -> Notice:
    if gap <= AUTO_GAP:
        return Notice("info", f"Integrated gradients took {used} steps (auto): the scores sum to the difference "
                              f"within {gap:.2%}.")
    return Notice("fallback", f"Integrated gradients stopped at {used} steps (auto's cap, or the time left) with "
                              f"the scores {gap:.2%} away from the difference, more than the {AUTO_GAP:.0%} asked: "
                              "read them as approximate, or run it from the command line with more --steps.")


def check_steps(method: str, steps: object) -> Steps | None:
    """Integrated gradients' steps as asked (a whole number from 1 to :data:`MAX_STEPS`, or ``"auto"``; None
    for the other methods), or an ExplorerError."""
    if method != "ig":
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
    if method not in METHODS:
        raise ExplorerError(f"Unknown attribution method {method!r}: use one of {', '.join(METHODS)}.")
    n = check_steps(method, steps)
    frame = framer.build(loaded, task, text, target, foil, pair)
    first = AUTO_STEPS[0] if n == AUTO else int(n or 0)
    cost = costs.estimate(loaded.model, frame, method, first, loaded.device)
    costs.check(cost)  # before any work: a method that cannot stop halfway must fit the time left
    started = time.perf_counter()
    scores, output, base, complete, notes, used = _scores(loaded, frame, method, n or 0, cost, progress, span)
    seconds = time.perf_counter() - started
    if not notes and method != "ig":  # integrated gradients record each of their rounds
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
    if method not in METHODS:
        raise ExplorerError(f"Unknown attribution method {method!r}: use one of {', '.join(METHODS)}.")
    check_steps(method, steps)
    loaded = loading.load_model(ref, tasks.loading_task(ref), device=device, dtype=dtype,
                                purpose="Why this prediction")
    task = tasks.of(ref.family, tasks.has_head(ref), text if isinstance(text, str) else "")
    result = attribute(loaded, task, text, target, method, foil=foil, pair=pair, steps=steps, progress=progress,
                       span=span)
    return replace(result, model=ref.spec)
