"""A finished lab run as a real local model: ``save_pretrained`` weights, the lab tokenizer, a card, ``lab.json``.

A checkpoint is written into a hidden temporary folder beside its target and renamed into place
only once every file is written and flushed (as :mod:`explorer.runtime.bundled` publishes the
converted decoder): an exception, Ctrl-C or a crash mid-save leaves the previous checkpoint or
nothing, never half a model. Checkpoints go to ``<models folder>/lab/NAME`` by default
(:func:`explorer.runtime.weights.lab_root`), where every live page lists them as ``lab/NAME``,
labelled "trained here (N steps on M words)" from their ``lab.json``.

What is saved is what the live pages can load (:func:`exportable`): a transformers model as
itself; a lab wrapper through its ``exportable()`` method, or by its parts' names: ELECTRA's pair
saves the discriminator (``ElectraForPreTraining``) at the top and its generator, a masked LM,
in ``generator/``; SpanBERT's wrapper saves its inner ``BertForMaskedLM`` (``model.mlm``);
DistilBERT's saves its ``student``. Each part gets its own copy of the tokenizer, so
``fill-mask --models DIR/generator`` works too.

>>> label({"steps": 300, "corpus": {"words": 950947}})
'trained here (300 steps on 950,947 words)'
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.core import persist, userfiles
from explorer.core.errors import ExplorerError, shorten
from explorer.runtime import fence, modelkind, weights
from explorer.training import corpus, vocab

if TYPE_CHECKING:  # the trainer imports torch; listing checkpoints must not
    from explorer.training.trainer import Run

__all__ = ["CARD", "EXITS", "README", "Trained", "card_text", "check_target", "default_out", "exportable", "has_exits",
           "label", "load_card", "save", "target_of", "trained"]

CARD = "lab.json"  # the run's summary (trainer.summary): what marks a folder as a lab checkpoint
README = "README.md"  # the card in words
EXITS = "fastbert"  # FastBERT's exits, when trained (explorer.training.exits): exits.pt and exits.json
MAX_CARD_BYTES = 5_000_000  # 20,000 steps of [step, loss] pairs are ~0.5 MB; anything far larger is not ours
MAX_LISTED = 200  # a models folder with thousands of runs lists the newest 200
_PARTS = (("discriminator", ""), ("generator", "generator"))  # ELECTRA's pair: what each part is saved as


@dataclass(frozen=True)
class Trained:
    """One lab checkpoint in the models folder, as the pages offer it (``spec`` loads it: ``lab/NAME``)."""

    spec: str
    path: str
    label: str
    objective: str
    model_type: str | None
    family: str | None  # "encoder", "decoder" or "encoder-decoder" (explorer.runtime.modelkind)
    heads: tuple[str, ...]  # config.json's architectures, e.g. ("BertForMaskedLM",)


def default_out(objective: str, size: str, steps: int, seed: int, models_dir: str | None = None) -> Path:
    """``<models folder>/lab/<objective>-<size>-<steps>steps-seed<seed>``: where ``pretrain`` saves by default."""
    return weights.lab_root(models_dir) / f"{objective}-{size}-{steps}steps-seed{seed}"


def exportable(model: Any) -> dict[str, Any]:
    """``{subfolder: PreTrainedModel}`` to save ("" = the checkpoint itself); see the module docstring.

    A family with its own wrapper extends this by giving the wrapper an ``exportable()`` method that
    returns the same mapping (nothing to edit here).
    """
    own = getattr(model, "exportable", None)
    if callable(own):
        return dict(own())
    if hasattr(model, "save_pretrained"):
        return {"": model}
    if all(hasattr(model, part) for part, _ in _PARTS):
        return {sub: getattr(model, part) for part, sub in _PARTS}
    for inner in ("mlm", "student"):
        if hasattr(model, inner) and hasattr(getattr(model, inner), "save_pretrained"):
            return {"": getattr(model, inner)}
    raise ExplorerError(f"A {type(model).__name__} cannot be saved as a local model: give it an exportable() "
                        "method naming its transformers parts (explorer.training.checkpoint.exportable).")


def has_exits(directory: str | Path) -> bool:
    """Whether a checkpoint folder holds trained FastBERT exits (the Compression lab's early exit)."""
    return (Path(directory) / EXITS / "exits.json").is_file()


def label(card: dict[str, Any]) -> str:
    """How the pages name a lab model: "trained here (N steps on M words)"."""
    words = (card.get("corpus") or {}).get("words", 0)
    return f"trained here ({int(card.get('steps', 0)):,} steps on {int(words):,} words)"


def load_card(directory: str | Path) -> dict[str, Any]:
    """The ``lab.json`` of a checkpoint (bounded read, checked JSON); a folder without one says so."""
    path = Path(directory) / CARD
    if not path.is_file():
        raise ExplorerError(f"{shorten(fence.public(directory))} has no {CARD}: it is not a lab checkpoint "
                            "(train one with `python -m explorer pretrain`).")
    card = userfiles.loads_json(userfiles.read_path(path, MAX_CARD_BYTES, CARD), CARD, MAX_CARD_BYTES)
    if not isinstance(card, dict) or not {"objective", "steps"} <= card.keys():
        raise ExplorerError(f"{CARD} in {shorten(fence.public(directory))} is not a lab card (no objective or "
                            "steps): train the model again to rewrite it.")
    return card


def check_target(target: Path) -> None:
    """A new, empty or earlier lab folder may be (over)written; anything else is the user's and is refused. The
    folder it will be written in must take a new file: a probe file is created there and removed (``/proc/self/x``,
    a read-only disk or a folder of someone else's is refused now, not after minutes of training)."""
    try:
        _check_target(target)
        _probe_writable(target)
    except OSError as err:  # a 10,000-character name, a folder we may not read
        raise ExplorerError(f"Cannot use {shorten(str(target))} as the checkpoint folder: "
                            f"{err.strerror or err}. Name another folder.") from err


def _probe_writable(target: Path) -> None:
    """Create and remove a file where :func:`save` will write: the target's parent, or (when that does not exist
    yet and save will create it) the nearest folder above it that exists."""
    where = target.absolute().parent
    while not where.exists() and where != where.parent:
        where = where.parent
    if not where.is_dir():
        raise ExplorerError(f"Cannot write the checkpoint under {shorten(str(where))}: it is not a folder. "
                            "Name another --out folder (or --models-dir).")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{target.name[:40]}.probe-", dir=where)
    except OSError as err:
        raise ExplorerError(f"Cannot write the checkpoint in {shorten(str(where))}: {err.strerror or err}. "
                            "Name another --out folder (or --models-dir).") from err
    os.close(fd)
    os.unlink(probe)


def _check_target(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise ExplorerError(f"--out {shorten(str(target))} is a file: name a folder for the checkpoint.")
    if target.is_dir() and not (target / CARD).is_file() and any(target.iterdir()):
        raise ExplorerError(f"{shorten(str(target))} already holds files that are not a lab checkpoint: name a "
                            "new or empty folder (an earlier lab checkpoint there would be replaced).")


def card_text(summary: dict[str, Any], run: Run) -> str:
    """The README.md of a checkpoint: how it was trained, in words."""
    recipe, words = run.recipe, summary["corpus"]["words"]
    licence = ("Python Software Foundation License (see assets/ATTRIBUTION.md)" if run.corpus.name ==
               corpus.BUNDLED_NAME else "the user's own text: its licence is the user's")
    first, last = (summary["eval"].get(k) or {} for k in ("first", "last"))
    held_out = f"{first.get('loss', float('nan')):.3f} -> {last.get('loss', float('nan')):.3f}"
    return "\n".join([
        f"# {recipe.label}, {summary['size']}, {summary['steps']:,} steps",
        "",
        f"Trained from scratch by the Transformer Explorer's pretraining lab; {label(summary)}.",
        "",
        f"- Objective: {recipe.name} ({recipe.label}), scaled down from the catalog's {recipe.variant}",
        f"- Size: {summary['size']}; parameters: {summary['params']:,}",
        f"- Steps: {summary['steps']:,}; tokens seen: {summary['tokens_seen']:,}; "
        f"training FLOPs: {summary['flops']:.3g}",
        f"- Corpus: {run.corpus.name}, {words:,} words ({summary['corpus']['train_words']:,} trained on); "
        f"licence: {licence}",
        f"- Seed: {summary['seed']}; device: {summary['device']}; training time: {summary['seconds']:.1f} s",
        f"- Held-out loss (first -> last evaluation): {held_out}",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M %Z')}",
        "- Tokenizer: the lab's uncased WordPiece vocabulary (8,192 pieces), saved beside the weights",
        "",
        "A tiny model trained for minutes: its predictions are real but rough. The full run is in lab.json.",
        "",
    ])


def _fsync_tree(directory: Path) -> None:
    """Flush every file (subfolders too), so a crash after the rename cannot leave torn files."""
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            with path.open("rb") as handle:
                os.fsync(handle.fileno())


def _write_into(out: Path, run: Run, target: Path) -> None:
    from transformers.utils import logging as hf_logging

    from explorer.training import record  # imports torch: only a save needs it

    hf_logging.disable_progress_bar()  # "Writing model shards" bars would clutter the CLI's own progress
    tok = vocab.tokenizer()
    for sub, model in exportable(run.model).items():
        model.save_pretrained(out / sub if sub else out)
        tok.save_pretrained(out / sub if sub else out)
    summary = record.of(run.plan, run, out=str(target)).to_dict()
    (out / CARD).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    (out / README).write_text(card_text(summary, run), encoding="utf-8")
    _fsync_tree(out)


def target_of(out_dir: str | Path) -> Path:
    """The folder ``out_dir`` names, as :func:`save` writes it (checked text, ``~`` expanded, absolute), after
    :func:`check_target`: what the CLI calls before it builds a model."""
    target = Path(fence.check_path_text(str(out_dir), "output folder")).expanduser().absolute()
    check_target(target)
    return target


def save(run: Run, out_dir: str | Path) -> Path:
    """Write ``run``'s model, tokenizer, card and ``lab.json`` to ``out_dir`` atomically; return the folder."""
    target = target_of(out_dir)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    except OSError as err:
        raise ExplorerError(f"Cannot write the checkpoint in {shorten(str(target.parent))}: "
                            f"{err.strerror or err}. Name another --out folder.") from err
    try:
        _write_into(work, run, target)
        persist.publish_dir(work, target)
    except OSError as err:  # disk full, permissions: say so; the finally below removes the half-written folder
        raise ExplorerError(f"Saving the checkpoint failed ({err.strerror or err}); nothing was written to "
                            f"{shorten(str(target))}. Free some space or name another --out folder.") from err
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _listed(folder: Path) -> Trained | None:
    if folder.name.startswith(".") or not (folder / "config.json").is_file() or not (folder / CARD).is_file():
        return None  # a temporary folder of a save in progress, or not a lab checkpoint
    try:
        card = load_card(folder)
    except ExplorerError:  # a damaged card: the folder is not offered (loading it by path still says why)
        return None
    spec = f"{weights.LAB_PREFIX}{folder.name}"
    family, config = modelkind.family_of(spec, folder)
    heads = tuple(str(a) for a in config.get("architectures") or ())
    return Trained(spec, str(folder), label(card), str(card["objective"]), config.get("model_type"), family, heads)


def trained(models_dir: str | None = None) -> list[Trained]:
    """The lab checkpoints in the models folder, newest first (none when the folder is unusable)."""
    try:
        root = weights.lab_root(models_dir)
        folders = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    except (ExplorerError, OSError):  # a fenced or unreadable models folder holds nothing to offer
        return []
    folders.sort(key=lambda p: ((p / CARD).stat().st_mtime if (p / CARD).exists() else 0.0, p.name), reverse=True)
    found = (_listed(p) for p in folders[:MAX_LISTED * 2])
    return [t for t in found if t is not None][:MAX_LISTED]
