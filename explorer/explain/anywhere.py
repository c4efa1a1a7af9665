"""Why this prediction of a model wherever it runs: one door for a :class:`~explorer.serving.backend.Backend`.

A page holds backends and asks them all the same way; whether the work runs here or through an engine is decided
here, once. A model in this process runs the lens and every attribution method on its own weights (where the
backend says to: its device and dtype); a served model answers occlusion through its engine's scoring, and the lens
and the gradient methods are refused with the backend's own reason (its insides are not available).

>>> from explorer.serving import backend
>>> from explorer.serving.endpoints import Endpoint
>>> part_tokens(backend.served(Endpoint("e", "http://127.0.0.1:9/v1")))  # a request per token left out
8
"""

from __future__ import annotations

from collections.abc import Callable

from explorer.core.errors import ExplorerError
from explorer.explain import attribution, lens, served
from explorer.explain.attribution import Attribution, Steps
from explorer.explain.lens import Lens
from explorer.explain.methods import method_of
from explorer.serving.backend import Backend

__all__ = ["LOCAL_PART_TOKENS", "SERVED_PART_TOKENS", "attribute_on", "lens_on", "part_tokens"]

LOCAL_PART_TOKENS = 32  # tokens occluded per request of a model here (seconds of Gemma 3 270M on 2 cores)
SERVED_PART_TOKENS = 8  # a served model's: a request per token left out, about half a second each on a CPU engine


def part_tokens(model: Backend) -> int:
    """Tokens one request of a page occludes (:mod:`explorer.explain.parts`): fewer where each is a request."""
    return LOCAL_PART_TOKENS if model.endpoint is None else SERVED_PART_TOKENS


def _insides(model: Backend, what: str) -> None:
    why = model.why_not("insides")
    if why is not None or model.ref is None:
        raise ExplorerError(f"{model.shown}: {what} cannot run: {why or 'it was not resolved here'}.")


def lens_on(model: Backend, text: str, target: str | None, position: int | None = None,
            tuned: bool = False) -> Lens:
    """Every layer's reading of ``model`` on ``text`` (a served model: refused in words)."""
    _insides(model, "the lens")
    assert model.ref is not None  # _insides refused a model without one
    device, dtype = model.placement
    return lens.run(model.ref, text, target, position=position, tuned=tuned, device=device, dtype=dtype)


def attribute_on(model: Backend, text: str, target: str | None, method: str, *, foil: str | None = None,
                 pair: str | None = None, steps: Steps | None = None, span: tuple[int, int] | None = None,
                 progress: Callable[[float, str], None] | None = None) -> Attribution:
    """``method``'s score of every token of ``text`` on ``model``, here or through its engine."""
    record = method_of(method)
    if model.endpoint is not None and record.served:
        return served.attribute(model.endpoint, text, target, method, foil=foil, progress=progress, span=span)
    _insides(model, record.label)
    assert model.ref is not None
    device, dtype = model.placement
    return attribution.run(model.ref, text, target, method, foil=foil, pair=pair, steps=steps, device=device,
                           dtype=dtype, progress=progress, span=span)
