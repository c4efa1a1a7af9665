"""Which models the attention viewer offers: the bundled one, downloaded variants, or random weights.

Trained weights must be on disk (no download happens while browsing); in random-weight mode every
catalogued variant small enough to initialise quickly on a CPU is offered.

>>> model_options(random_weights=False)[0]
('sentence-bert', 'Sentence-BERT (all-MiniLM-L6-v2) (bundled)')
>>> all(label.endswith("(untrained)") for _, label in model_options(random_weights=True))
True
"""

from __future__ import annotations

from explorer.architecture import catalog
from explorer.runtime import weights
from explorer.training import checkpoint

__all__ = ["BUNDLED", "RANDOM_MAX_PARAMS", "model_options"]

BUNDLED = "sentence-bert"  # ships with the app (all-MiniLM-L6-v2): always available offline
RANDOM_MAX_PARAMS = 450_000_000  # random init of bigger variants takes minutes and GBs on a CPU


def _random_options() -> list[tuple[str, str]]:
    return [(k, f"{v.name} (untrained)") for k, v in catalog.load_catalog().items()
            if (v.published_params or 0) <= RANDOM_MAX_PARAMS and "large" not in (k + v.name).lower()]


def model_options(random_weights: bool, models_dir: str | None = None) -> list[tuple[str, str]]:
    """``(key, label)`` of the models one can pick: bundled first, then catalog keys whose weights
    are ready on disk, then the pretraining lab's models (``lab/NAME``); with ``random_weights`` every
    variant small enough to initialise here."""
    if random_weights:
        return _random_options()

    variants = catalog.load_catalog()
    ready = [s.key for s in weights.status_all(models_dir) if s.status == "ready"]
    keys = [BUNDLED] + [k for k in ready if k != BUNDLED]
    return [(k, f"{variants[k].name} (bundled)" if k == BUNDLED else variants[k].name if k in variants else k)
            for k in keys] + [(m.spec, f"{m.spec}: {m.label}") for m in checkpoint.trained(models_dir)]
