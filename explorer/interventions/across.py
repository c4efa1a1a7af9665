"""The same patching experiment across model families, side by side: a masked LM's fill-in, a decoder's next
token, a T5 or BART span, each with its own grid, on one relative-depth axis (0 = first block, 1 = last), so a
6-layer and an 18-layer model are read together.

One typed pair with a blank serves every family (:mod:`explorer.interventions.prompts`); a model whose tokenizer
splits the two prompts into different lengths, or that cannot read the blank, is listed with the reason instead of
stopping the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError
from explorer.interventions import models, patching
from explorer.interventions.grid import PatchGrid
from explorer.runtime import cancel

if TYPE_CHECKING:
    from explorer.runtime.resolve import ModelRef

__all__ = ["MAX_MODELS", "Across", "across", "check_specs", "local_refs"]

MAX_MODELS = 4  # grids side by side: each is a full patching experiment


@dataclass(frozen=True)
class Across:
    """Grids of several models for one pair, and the models that could not take part, with why."""

    grids: tuple[PatchGrid, ...]
    refused: tuple[tuple[str, str], ...]  # (model, reason)

    def to_dict(self) -> dict[str, object]:
        return {"grids": [g.to_dict() for g in self.grids],
                "refused": [{"model": m, "reason": r} for m, r in self.refused]}


def _check_count(count: int) -> None:
    if not count:
        raise ExplorerError("No model given: pick at least one model to patch.")
    if count > MAX_MODELS:
        raise ExplorerError(f"{count} models: compare at most {MAX_MODELS} at once (each is a whole patching grid).")


def check_specs(specs: Sequence[str]) -> tuple[str, ...]:
    """The distinct model names, at most :data:`MAX_MODELS`, none served."""
    names = tuple(dict.fromkeys(models.check_local(s) for s in specs if str(s).strip()))
    _check_count(len(names))
    return names


def local_refs(specs: Sequence[str], models_dir: str | None = None, *,
               random_weights: bool = False) -> tuple[ModelRef, ...]:
    """The models a page or command names, checked (:func:`check_specs`) and each resolved once
    (:func:`explorer.interventions.models.local_ref`): what :func:`across` takes. Nothing is loaded."""
    return tuple(models.local_ref(name, models_dir, random_weights=random_weights) for name in check_specs(specs))


def across(refs: Sequence[ModelRef], clean: object, corrupt: object, target: object, foil: object = None, *,
           site: str = "resid", metric: str = "logit-diff", device: str | None = None,
           dtype: str | None = None) -> Across:
    """:func:`explorer.interventions.patching.patch` for each model of ``refs`` (:func:`local_refs`), in order; a
    model that cannot take part (its weights missing, its tokenizer splitting the pair differently) is listed with
    its reason."""
    distinct = tuple(dict.fromkeys(refs))  # the same model twice is one grid, as with names
    _check_count(len(distinct))  # a library caller's list, checked as the names were
    patching.check_site(site)
    grids: list[PatchGrid] = []
    refused: list[tuple[str, str]] = []
    for ref in distinct:
        try:
            grids.append(patching.patch(ref, clean, corrupt, target, foil, site=site, metric=metric, device=device,
                                        dtype=dtype))
        except cancel.RequestStopped as err:  # out of time: the grids so far are the answer
            if err.reason == "gone" or not grids:
                raise
            refused.append((ref.spec, str(err)))
            break
        except ExplorerError as err:
            refused.append((ref.spec, str(err)))
    return Across(tuple(grids), tuple(refused))
