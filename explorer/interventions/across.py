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

from explorer.core.errors import ExplorerError
from explorer.interventions import models, patching
from explorer.interventions.grid import PatchGrid
from explorer.runtime import cancel

__all__ = ["MAX_MODELS", "Across", "across"]

MAX_MODELS = 4  # grids side by side: each is a full patching experiment


@dataclass(frozen=True)
class Across:
    """Grids of several models for one pair, and the models that could not take part, with why."""

    grids: tuple[PatchGrid, ...]
    refused: tuple[tuple[str, str], ...]  # (model, reason)

    def to_dict(self) -> dict[str, object]:
        return {"grids": [g.to_dict() for g in self.grids],
                "refused": [{"model": m, "reason": r} for m, r in self.refused]}


def check_specs(specs: Sequence[str]) -> tuple[str, ...]:
    """The distinct model names, at most :data:`MAX_MODELS`, none served."""
    names = tuple(dict.fromkeys(models.check_local(s) for s in specs if str(s).strip()))
    if not names:
        raise ExplorerError("No model given: pick at least one model to patch.")
    if len(names) > MAX_MODELS:
        raise ExplorerError(f"{len(names)} models: compare at most {MAX_MODELS} at once (each is a whole patching "
                            "grid).")
    return names


def across(specs: Sequence[str], clean: object, corrupt: object, target: object, foil: object = None, *,
           site: str = "resid", metric: str = "logit-diff", random_weights: bool = False,
           models_dir: str | None = None, device: str | None = None, dtype: str | None = None) -> Across:
    """:func:`explorer.interventions.patching.patch` for each model of ``specs``, in order."""
    names = check_specs(specs)
    patching.check_site(site)
    grids: list[PatchGrid] = []
    refused: list[tuple[str, str]] = []
    for name in names:
        try:
            grids.append(patching.patch(name, clean, corrupt, target, foil, site=site, metric=metric,
                                        random_weights=random_weights, models_dir=models_dir, device=device,
                                        dtype=dtype))
        except cancel.RequestStopped as err:  # out of time: the grids so far are the answer
            if err.reason == "gone" or not grids:
                raise
            refused.append((name, str(err)))
            break
        except ExplorerError as err:
            refused.append((name, str(err)))
    return Across(tuple(grids), tuple(refused))
