"""Everything slow done once ahead, so the first page and the first command answer at once.

``python -m explorer prepare`` (and ``make run`` before it starts the server) does three things,
each a no-op when already done:

1. converts the bundled Gemma 3 270M GGUF into the models cache (:mod:`explorer.runtime.bundled`,
   about 1.5 minutes once; the live pages offer it by default);
2. counts every catalog variant's parameters (:mod:`explorer.architecture.census`, the Overview page and
   ``list``);
3. stores every variant's comparator row (:mod:`explorer.architecture.compare`), so the first
   ``compare`` needs neither torch nor transformers.

Steps 2-3 import torch and transformers' model code (~4 s of a cold ``compare``); afterwards
each is a fingerprint check, and a changed config, code or library version recomputes just
what changed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from explorer.architecture import catalog, census, compare
from explorer.core.errors import ExplorerError
from explorer.runtime import bundled

__all__ = ["Prepared", "prepare"]

Progress = Callable[[float, str], None]  # (fraction of the current step 0..1, what is happening)


@dataclass(frozen=True)
class Prepared:
    decoder: str  # where the converted decoder is, or why it is not
    decoder_ready: bool
    variants_counted: int
    variants_compared: int
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _decoder(models_dir: str | None, progress: Progress | None) -> tuple[str, bool]:
    try:
        return str(bundled.ensure_converted(models_dir, progress)), True
    except ExplorerError as err:  # package not installed: say how, the rest still prepares
        return str(err), False


def _compare_all(progress: Progress | None) -> int:
    keys = list(catalog.keys())
    if progress is not None:
        progress(0.0, f"Comparator rows of {len(keys)} variants (seconds when they are stored already)")
    compare.compare(keys)  # computes and stores only the entries whose fingerprint changed
    return len(keys)


def prepare(models_dir: str | None = None, progress: Progress | None = None, *,
            decoder: bool = True) -> Prepared:
    """Convert the bundled decoder (unless ``decoder`` is False) and fill the on-disk caches."""
    begin = time.perf_counter()
    where, ready = _decoder(models_dir, progress) if decoder else ("skipped", False)
    counted = len(census.catalog_params(progress))
    compared = _compare_all(progress)
    return Prepared(where, ready, counted, compared, round(time.perf_counter() - begin, 1))
