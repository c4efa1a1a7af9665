"""Activation patching (causal tracing: Meng et al. 2022; Wang et al. 2023): restore one activation of the clean
run inside the corrupted run and measure how much of the clean answer comes back.

For every layer and every position (``resid``, ``attn``, ``mlp``), or every layer and head (``heads``: the head's
output at every position), one copy of the corrupted run gets that single value from the clean run; the metric of
each copy, normalised, fills a :class:`~explorer.interventions.grid.PatchGrid` (0 = corrupted, 1 = clean). Copies
are rows of batched forwards (:mod:`explorer.interventions.plan` sizes them before any runs), with progress after
each forward; in a server request out of time the grid keeps the cells computed so far (NaN elsewhere) and a
notice says how many.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from explorer.core.errors import ExplorerError
from explorer.core.labels import UNTRAINED_NOTE
from explorer.core.notices import Notice
from explorer.interventions import metrics, models, plan, stacks, traces
from explorer.interventions.engine import Engine, engine_for
from explorer.interventions.grid import PatchGrid
from explorer.interventions.pair import Pair, make_pair
from explorer.interventions.prompts import check_prompt
from explorer.runtime import cancel, placement

if TYPE_CHECKING:
    from explorer.internals.sites import Sites
    from explorer.runtime.loading import LoadedModel
    from explorer.runtime.resolve import ModelRef

__all__ = ["GRID_SITES", "Progress", "grid_cells", "patch", "patch_loaded"]

GRID_SITES = ("resid", "attn", "mlp", "heads")
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class _Runs:
    """What the clean and corrupted runs give a grid: the clean values to patch in, both runs' answer logits."""

    clean_acts: list[torch.Tensor]  # [(T, X)] * layers
    clean_logits: torch.Tensor  # (V,)
    corrupt_logits: torch.Tensor  # (V,)


def check_site(site: str) -> str:
    if site not in GRID_SITES:
        raise ExplorerError(f"Unknown site {site!r}: use one of {', '.join(GRID_SITES)}.")
    return site


def grid_cells(s: Sites, site: str, positions: int) -> list[traces.Cell]:
    """Every cell of a grid, layer by layer: (layer, position), or (layer, head) for ``heads``."""
    columns = s.heads if site == "heads" else positions
    return [(layer, column) for layer in range(s.layers) for column in range(columns)]


def _runs(engine: Engine, s: Sites, site: str, pair: Pair) -> tuple[_Runs, int]:
    clean_in = traces.batch_inputs(engine, pair.clean, 1)
    readout = traces.readout_index(pair.clean, clean_in)
    acts, clean_logits = traces.capture(engine, s, site, clean_in, readout)
    _, corrupt_logits = traces.capture(engine, s, "resid", traces.batch_inputs(engine, pair.corrupt, 1), readout)
    return _Runs(acts, clean_logits.float().cpu(), corrupt_logits.float().cpu()), readout


def _metric(logits: torch.Tensor, metric: str, pair: Pair, clean: torch.Tensor) -> torch.Tensor:
    """(B, V) -> (B,) the metric of each row."""
    return metrics.values(logits, metric, pair.target_id, pair.foil_id, clean=clean)


def _check_gap(clean: float, corrupt: float, metric: str, pair: Pair) -> None:
    if abs(clean - corrupt) <= metrics.MIN_GAP:
        raise ExplorerError(f"The clean and corrupted prompts give the same {metrics.LABELS[metric]} "
                            f"({clean:.4g}): there is no difference to restore. Change the corrupted prompt so the "
                            f"model's answer moves away from {pair.target!r}, or pick another metric.")


def _fill(engine: Engine, s: Sites, site: str, pair: Pair, runs: _Runs, readout: int, work: plan.Plan,
          metric: str, progress: Progress) -> tuple[list[float], Notice | None]:
    """Every cell's metric in cell order (NaN for cells a stopped request did not reach) and why it stopped."""
    cells = grid_cells(s, site, len(pair.tokens))
    out = [float("nan")] * len(cells)
    step = work.rows_per_forward
    for start in range(0, len(cells), step):
        try:
            cancel.check()  # a stopped request frees its worker between batches
        except cancel.RequestStopped as err:
            if err.reason == "gone" or start == 0:
                raise
            return out, Notice("stopped", f"{err} Computed: {start:,} of {len(cells):,} cells; the rest are blank.")
        batch = cells[start:start + step]
        inputs = traces.batch_inputs(engine, pair.corrupt, len(batch))
        logits = traces.replaced(engine, s, site, inputs, readout, batch, dict(enumerate(runs.clean_acts)))
        out[start:start + len(batch)] = _metric(logits, metric, pair, runs.clean_logits).tolist()
        progress(min(1.0, (start + len(batch)) / len(cells)), f"{start + len(batch):,} of {len(cells):,} cells")
    return out, None


def _vocab(engine: Engine, pair: Pair, readout: int) -> int:
    """Logits one patched copy returns: the vocabulary at each position the output keeps."""
    vocab = int(getattr(engine.model.config, "vocab_size", 0) or 50_000)
    keeps = 1 if readout == -1 else len(pair.clean.decoder_ids or pair.clean.ids)
    return vocab * keeps


def patch_loaded(loaded: LoadedModel, clean: object, corrupt: object, target: object, foil: object = None, *,
                 site: str = "resid", metric: str = "logit-diff", stack: str | None = None,
                 progress: Progress | None = None, max_rows: int | None = None) -> PatchGrid:
    """The patching grid of a loaded model (see the module docstring). ``stack``: an encoder-decoder's "encoder"
    (default: the typed prompt's positions) or "decoder"; ``max_rows``: copies per forward at most (1: one forward
    per cell, what a loop over cells would do)."""
    check_site(site)
    metrics.check_metric(metric, foil)
    started, report = time.perf_counter(), progress or (lambda _f, _t: None)
    engine = engine_for(loaded.model)
    s, stack_name = stacks.stack_sites(engine.model, stack)
    if not s.has_head:
        raise ExplorerError(f"{loaded.name} has no language-model head (it was saved without one, like "
                            "all-MiniLM-L6-v2): there is no answer to measure. Pick a masked LM, a decoder or an "
                            f"encoder-decoder, e.g. {models.BUNDLED}.")
    pair = make_pair(loaded.tokenizer, engine.model.config, s.family, stack_name, clean, corrupt, target, foil)
    positions = len(pair.tokens)
    readout = traces.readout_index(pair.clean, traces.batch_inputs(engine, pair.clean, 1))
    work = plan.plan(engine.model.config, len(grid_cells(s, site, positions)), len(pair.clean.ids),
                     _vocab(engine, pair, readout), dtype_bytes=engine.dtype_bytes, max_rows=max_rows)
    report(0.0, f"{work.cells:,} patched copies in {work.forwards:,} forwards")
    with engine.session():
        runs, readout = _runs(engine, s, site, pair)
        both = _metric(torch.stack([runs.clean_logits, runs.corrupt_logits]), metric, pair, runs.clean_logits)
        clean_value, corrupt_value = (float(v) for v in both)
        _check_gap(clean_value, corrupt_value, metric, pair)
        flat, stopped = _fill(engine, s, site, pair, runs, readout, work, metric, report)
    columns = s.heads if site == "heads" else positions
    values = tuple(tuple(flat[i * columns:(i + 1) * columns]) for i in range(s.layers))
    labels = tuple(f"head {h}" for h in range(s.heads)) if site == "heads" else pair.tokens
    notices = pair.notices + tuple(n for n in (stopped, Notice("untrained", UNTRAINED_NOTE) if loaded.untrained
                                               else None) if n)
    return PatchGrid(loaded.key, s.family, stack_name, site, metric, pair.tokens, pair.corrupt_tokens, labels,
                     pair.target, pair.foil, clean_value, corrupt_value, values,
                     tuple(stacks.relative_depth(s.layers)), pair.first_difference, work, notices, loaded.untrained,
                     time.perf_counter() - started, **placement.ran_on(loaded))


def patch(ref: ModelRef, clean: object, corrupt: object, target: object, foil: object = None, *, site: str = "resid",
          metric: str = "logit-diff", stack: str | None = None, device: str | None = None, dtype: str | None = None,
          progress: Progress | None = None) -> PatchGrid:
    """:func:`patch_loaded` for the model ``ref`` names (resolved by the caller,
    :func:`explorer.interventions.models.local_ref`); the inputs are checked before the model loads."""
    check_site(site)
    metrics.check_metric(metric, foil)
    check_prompt(clean, "clean prompt")
    check_prompt(corrupt, "corrupted prompt")
    loaded = models.load(ref, device=device, dtype=dtype)
    return patch_loaded(loaded, clean, corrupt, target, foil, site=site, metric=metric, stack=stack,
                        progress=progress)
