"""What the Features page asks, from a resolved model: the dictionaries it has, one feature's dashboard, a text's
active features, a clamp. Each loads the model once through the process-wide cache (the loader's task for its
family) and reads the dictionary folder; the page's cached wrappers key on the ``ModelRef`` and the folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError, shorten
from explorer.explain import task as tasks
from explorer.features import active, clamp, dashboard, folder, pipeline, sample
from explorer.runtime import bundled, loading
from explorer.training import corpus

if TYPE_CHECKING:
    from explorer.runtime.resolve import ModelRef

__all__ = ["active_of", "card_of", "clamp_of", "fits", "listed", "load", "open_saved"]


def load(ref: ModelRef, device: str = "auto", dtype: str = "auto") -> loading.LoadedModel:
    return loading.load_model(ref, tasks.loading_task(ref), purpose="the feature lab", device=device, dtype=dtype)


def _both(ref: ModelRef, place: str, device: str, dtype: str) -> tuple[loading.LoadedModel, folder.Saved]:
    """The model and the dictionary, checked to fit each other."""
    loaded, saved = load(ref, device, dtype), open_saved(place)
    pipeline.check_fits(loaded, saved)
    return loaded, saved


def listed(ref: ModelRef) -> list[tuple[str, str]]:
    """(folder, label) of the dictionaries saved for ``ref`` (the shipped one first for the bundled Gemma)."""
    key = ref.spec
    return [(str(f), label) for f, label in folder.listed(ref.path, key, bundled.KEY)]


def open_saved(place: str) -> folder.Saved:
    """The dictionary in a listed (or typed) folder."""
    if not Path(place).is_dir():
        raise ExplorerError(f"{shorten(place)} is not a folder of this machine: pick a dictionary from the list.")
    return folder.load(place)


def fits(ref: ModelRef, place: str, device: str = "auto", dtype: str = "auto") -> bool:
    """True when the dictionary in ``place`` reads and writes this model's widths (an ExplorerError otherwise)."""
    _both(ref, place, device, dtype)
    return True


def card_of(ref: ModelRef, place: str, feature: int, tokens: int = sample.SAMPLE_TOKENS, device: str = "auto",
            dtype: str = "auto") -> dashboard.Card:
    loaded, saved = _both(ref, place, device, dtype)
    saved.dictionary.direction(feature)
    return dashboard.card(loaded, saved, sample.of(loaded, saved, corpus.bundled(), tokens), feature)


def active_of(ref: ModelRef, place: str, text: str, device: str = "auto", dtype: str = "auto") -> active.Active:
    return active.active(*_both(ref, place, device, dtype), text)


def clamp_of(ref: ModelRef, place: str, feature: int, value: float, text: str, device: str = "auto",
             dtype: str = "auto") -> clamp.Clamped:
    return clamp.clamp(*_both(ref, place, device, dtype), feature, value, text)
