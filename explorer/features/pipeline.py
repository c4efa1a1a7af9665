"""A dictionary from a model to a saved folder: harvest, train, measure, save; and a saved one measured again.

:func:`train` is what the page's background job and ``python -m explorer sae train`` both run: the recipe's taps
resolved on the model (:mod:`explorer.features.hooks`), the training part of the corpus harvested
(:mod:`explorer.features.harvest`), the dictionary trained (:mod:`explorer.features.trainer`) and folded back into
the model's units, measured on held-out windows (:mod:`explorer.features.fidelity`) and saved
(:mod:`explorer.features.folder`). A stop (the page's Stop, the Lab's time budget, Ctrl-C) during training keeps
what was trained: it is measured and saved as such, with the steps it had.

:func:`evaluate` measures any saved dictionary (ours, SAELens's, Gemma Scope's) on *this* model: the bundled
Gemma 3 270M is a dequantised Q4_K_M, not the weights a downloaded file was trained on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from explorer.core.errors import ExplorerError
from explorer.features import about as abouts
from explorer.features import fidelity, folder, harvest, hooks, trainer, windows
from explorer.features.about import About
from explorer.features.fidelity import Fidelity
from explorer.features.folder import Saved
from explorer.features.hooks import Tap
from explorer.features.recipe import Recipe
from explorer.features.trainer import Run, TrainReport
from explorer.runtime import fence, weights
from explorer.runtime.offload import input_device
from explorer.training.corpus import Corpus

if TYPE_CHECKING:
    from explorer.runtime.loading import LoadedModel

__all__ = ["Trained", "check_fits", "evaluate", "family_of", "heldout", "stamp_of", "taps_of", "train"]

Progress = Callable[[float, str], None]
SHARES = (0.55, 0.35, 0.10)  # of the progress bar: harvest, training, measuring (their time on the defaults)


@dataclass(frozen=True)
class Trained:
    """A training's outcome: where it was saved, what it is, how faithful it is, how it went."""

    folder: str
    about: About
    fidelity: Fidelity
    report: TrainReport
    tokens: int  # activations harvested
    seconds: dict[str, float]  # harvest, train, measure

    @property
    def stopped(self) -> bool:
        return self.report.steps < self.report.asked

    def to_dict(self) -> dict[str, object]:
        return {"folder": self.folder, "kind": self.about.kind, "model": self.about.model, "site": self.about.site,
                "layer": self.about.layer, "stack": self.about.stack, **self.fidelity.to_dict(),
                "training": self.report.to_dict(), "tokens": self.tokens, "stopped": self.stopped,
                "seconds": {k: round(v, 2) for k, v in self.seconds.items()}}


def family_of(loaded: LoadedModel) -> str:
    return hooks.stack_of(loaded.model, None).family


def stamp_of(loaded: LoadedModel) -> str:
    """What changes when the model's weights on disk change (untrained weights: their catalog key)."""
    return f"{loaded.path}@{weights.weights_stamp(loaded.path)}" if loaded.path else f"random:{loaded.key}"


def taps_of(loaded: LoadedModel, recipe: Recipe) -> tuple[list[Tap], About]:
    """The recipe's hook points on this model (the middle layer when none is chosen) and its provenance."""
    s = hooks.stack_of(loaded.model, recipe.stack)
    if recipe.stack is not None and s.family != "encoder-decoder" and recipe.stack == "encoder":
        raise ExplorerError("This model has one stack: leave the stack unset.")
    layer = s.layers // 2 if recipe.layer is None else recipe.layer
    site = "mlp" if recipe.kind == "transcoder" else recipe.site
    about = About(recipe.kind, "explorer", model=loaded.key, site=site, layer=layer, stack=recipe.stack)
    return abouts.taps(loaded.model, about), about


def heldout(loaded: LoadedModel, corpus: Corpus, tokens: int, seq_len: int, seed: int) -> windows.Windows:
    """Held-out windows with about ``tokens`` ordinary tokens."""
    return windows.cut(loaded.tokenizer, corpus.heldout, window_count(loaded, tokens, seq_len), seq_len, seed + 1)


def window_count(loaded: LoadedModel, tokens: int, seq_len: int) -> int:
    """Windows of ``seq_len`` holding about ``tokens`` ordinary tokens."""
    per = seq_len - sum(len(p) for p in windows.frame(loaded.tokenizer))
    return max(1, -(-tokens // max(1, per)))


def _scaled(progress: Progress | None, start: float, share: float) -> Progress | None:
    if progress is None:
        return None
    return lambda f, text: progress(start + share * min(1.0, f), text)


def _record(loaded: LoadedModel, about: About, recipe: Recipe, report: TrainReport, measured: Fidelity,
            corpus: Corpus, tokens: int) -> dict[str, object]:
    return {"name": about.name, "kind": about.kind, "model": loaded.key, "stamp": stamp_of(loaded),
            "site": about.site, "layer": about.layer, "stack": about.stack, "recipe": recipe.to_dict(),
            "training": report.to_dict(), "measured": measured.to_dict(), "corpus": corpus.name, "tokens": tokens,
            "dtype": loaded.dtype, "device": loaded.device}


def train(loaded: LoadedModel, recipe: Recipe, corpus: Corpus, *, progress: Progress | None = None,
          should_stop: Callable[[], bool] | None = None, out: str | Path | None = None, save: bool = True,
          state: Run | None = None, half: bool = False) -> tuple[Trained, Run]:
    """Harvest, train, measure and save (see the module docstring); the outcome and the training's state (pass it
    back as ``state`` to go on after a stop); ``half`` saves the weights in float16 (a dictionary shipped in the
    repository)."""
    recipe = recipe.checked()
    taps, about = taps_of(loaded, recipe)
    family, began = family_of(loaded), time.perf_counter()
    got = harvest.harvest(loaded, family, taps, about.stack, corpus.train, corpus.name, recipe.tokens,
                          recipe.seq_len, recipe.seed, stamp=stamp_of(loaded),
                          progress=_scaled(progress, 0.0, SHARES[0]), should_stop=should_stop)
    if not got.complete:
        raise ExplorerError(f"Stopped while harvesting ({got.rows:,} of {recipe.tokens:,} tokens, kept on disk): "
                            "start again to go on from there.")
    harvested = time.perf_counter()
    run, report = trainer.train(got, recipe, state=state, progress=_scaled(progress, SHARES[0], SHARES[1]),
                                should_stop=should_stop)
    trained = time.perf_counter()
    if progress is not None:
        progress(SHARES[0] + SHARES[1], "measuring on held-out text (L0, variance explained, losses)")
    d = trainer.fold(run)
    held = heldout(loaded, corpus, recipe.heldout_tokens, recipe.seq_len, recipe.seed)
    measured = fidelity.measure(loaded, family, taps, about.stack, d, held, recipe.seed,
                                window_count(loaded, recipe.ce_tokens, recipe.seq_len))
    name = folder.name_of(recipe.kind, about.site or "", about.layer or 0, recipe.width, recipe.k, recipe.sparsity,
                          recipe.seed, recipe.stack)
    about = replace(about, name=name, corpus=corpus.name, recipe=recipe.to_dict(), training=report.to_dict(),
                    measured=measured.to_dict())
    where = ""
    if save and report.steps:
        places = [folder.check_out(str(out))] if out is not None else folder.targets(loaded.path, loaded.key, name)
        hooks_named = (taps[0].hook_name, taps[1].hook_name if len(taps) > 1 else None)
        saved = folder.save(d, about, _record(loaded, about, recipe, report, measured, corpus,
                                              min(got.rows, recipe.tokens)),
                            hooks_named, recipe.seq_len, places,
                            torch.float16 if half else torch.float32)
        where = fence.public(str(saved))
    seconds = {"harvest": harvested - began, "train": trained - harvested, "measure": time.perf_counter() - trained}
    return Trained(where, about, measured, report, min(got.rows, recipe.tokens), seconds), run


def evaluate(loaded: LoadedModel, saved: Saved, corpus: Corpus, *, tokens: int = 8_192, loss_tokens: int = 2_048,
             seq_len: int = 128, seed: int = 0) -> Fidelity:
    """A saved dictionary measured on this model's held-out windows (its claims stay in ``saved.about``)."""
    taps = check_fits(loaded, saved)
    held = heldout(loaded, corpus, tokens, seq_len, seed)
    return fidelity.measure(loaded, family_of(loaded), taps, saved.about.stack, saved.dictionary, held, seed,
                            window_count(loaded, loss_tokens, seq_len))


def check_fits(loaded: LoadedModel, saved: Saved) -> list[Tap]:
    """The dictionary's hook points on this model, once one short forward shows their widths are its own; an
    ExplorerError naming both otherwise."""
    taps = abouts.taps(loaded.model, saved.about)
    widths = _widths(loaded, family_of(loaded), taps)
    if widths[0] != saved.dictionary.shape.d_in or widths[-1] != saved.dictionary.shape.d_out:
        raise ExplorerError(f"This dictionary reads {saved.dictionary.shape.d_in} numbers and writes "
                            f"{saved.dictionary.shape.d_out}; {saved.about.where} of {loaded.key} has {widths[0]}"
                            f"{f' and {widths[-1]}' if len(widths) > 1 else ''}: it was made for another model.")
    return taps


def _widths(loaded: LoadedModel, family: str, taps: list[Tap]) -> list[int]:
    """The width of each tap, from one short forward."""
    ids = windows.cut(loaded.tokenizer, ((" ".join(["the"] * 16),),), 1, 12, 0).ids
    with hooks.session(loaded.model):
        inputs = windows.inputs(loaded.model, family, ids.to(input_device(loaded.model)))
        got, _ = hooks.run(loaded.model, inputs, reads=taps, stop_at=taps[-1])
    return [int(got[t].shape[-1]) for t in taps]
