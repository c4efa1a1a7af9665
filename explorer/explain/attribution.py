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
from explorer.runtime import loading
from explorer.runtime.placement import ran_on
from explorer.runtime.resolve import ModelRef

if TYPE_CHECKING:  # typing only: no runtime import of the loader's model types
    from explorer.runtime.loading import LoadedModel

__all__ = ["DEFAULT_STEPS", "MAX_STEPS", "METHOD_NAMES", "SERVED_INSIDES", "Attribution", "TokenScore",
           "attribute", "run"]

DEFAULT_STEPS = 32  # integrated gradients' steps: complete within ~1% on Gemma 3 270M and MiniLM (tests)
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

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["tokens"] = [asdict(t) for t in self.tokens]
        out["notices"], out["cost"] = texts(self.notices), self.cost.to_dict() if self.cost else None
        return out


def _scores(loaded: LoadedModel, frame: Frame, method: str, steps: int, cost: Cost,
            progress: Callable[[float, str], None] | None) -> tuple[list[float | None], float, float | None,
                                                                   float | None, tuple[Notice, ...]]:
    """(scores, output, baseline output, completeness, notices) of ``method``."""
    model = loaded.model
    if method in ("grad", "grad-input"):
        grad, emb, value = gradients.embedding_gradient(model, frame)
        found = gradients.grad_norm(frame, grad) if method == "grad" else gradients.grad_input(frame, grad, emb)
        return list[float | None](found), value, None, None, ()
    if method == "ig":
        per_batch = max(1, cost.rows // len(frame.rows))
        done = integrated.integrated(model, frame, steps, per_batch)
        return list[float | None](done.scores), done.output, done.baseline_output, done.completeness, ()
    occluded = occlusion.occlusion(model, frame, max(1, cost.rows // len(frame.rows)), progress)
    return occluded.scores, occluded.output, None, None, occluded.notices


def _steps(method: str, steps: int | None) -> int | None:
    if method != "ig":
        return None
    n = DEFAULT_STEPS if steps is None else steps
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_STEPS:
        raise ExplorerError(f"Integrated gradients' steps must be a whole number from 1 to {MAX_STEPS} (got {n!r}).")
    return n


def attribute(loaded: LoadedModel, task: str, text: str, target: str | None, method: str, *,
              foil: str | None = None, pair: str | None = None, steps: int | None = None,
              progress: Callable[[float, str], None] | None = None) -> Attribution:
    """``method``'s score of every token of ``text`` for ``target`` (against ``foil``) on a loaded model."""
    if method not in METHODS:
        raise ExplorerError(f"Unknown attribution method {method!r}: use one of {', '.join(METHODS)}.")
    n = _steps(method, steps)
    frame = framer.build(loaded, task, text, target, foil, pair)
    cost = costs.estimate(loaded.model, frame, method, n or 0, loaded.device)
    costs.check(cost)  # before any work: a method that cannot stop halfway must fit the time left
    started = time.perf_counter()
    scores, output, base, complete, notes = _scores(loaded, frame, method, n or 0, cost, progress)
    seconds = time.perf_counter() - started
    if not notes:
        costs.record(cost, seconds, loaded.device)
    shown = tuple(TokenScore(s.text, v, s.part) for s, v in zip(frame.shown, scores, strict=True))
    return Attribution(loaded.key, method, frame.task, frame.objective,
                       frame.target.scored if frame.target else pair or target,
                       frame.foil.scored if frame.foil else None, output, base, complete, shown, n,
                       round(seconds, 3), cost, frame.notices + notes, loaded.untrained, **ran_on(loaded))


def run(ref: ModelRef, text: str, target: str | None, method: str, *, foil: str | None = None,
        pair: str | None = None, steps: int | None = None, device: str | None = None, dtype: str | None = None,
        progress: Callable[[float, str], None] | None = None) -> Attribution:
    """:func:`attribute` after loading ``ref`` for what it predicts (:func:`explorer.explain.task.loading_task`);
    the text, target, foil, method and steps are checked before the model loads."""
    targets.check_typed(text)
    targets.check_typed_target(target)
    targets.check_typed_target(foil, "foil")
    if method not in METHODS:
        raise ExplorerError(f"Unknown attribution method {method!r}: use one of {', '.join(METHODS)}.")
    _steps(method, steps)
    loaded = loading.load_model(ref, tasks.loading_task(ref), device=device, dtype=dtype,
                                purpose="Why this prediction")
    task = tasks.of(ref.family, tasks.has_head(ref), text if isinstance(text, str) else "")
    result = attribute(loaded, task, text, target, method, foil=foil, pair=pair, steps=steps, progress=progress)
    return replace(result, model=ref.spec)
