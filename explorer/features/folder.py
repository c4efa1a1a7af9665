"""Dictionaries on disk: ours saved in SAELens's layout plus our record, any of the three layouts read back, and
where a model's dictionaries are.

Our folder (``<name>/``, named ``<kind>-<site><layer>-w<width>-<k or sparsity>-seed<seed>``) holds:

- ``cfg.json`` and ``sae_weights.safetensors``: SAELens 6's layout (:mod:`explorer.features.saelens`), so SAELens,
  and anything that reads it, loads the same dictionary;
- ``features.json``: ours: the model (its key and weights' stamp), the site, layer and stack, the recipe, the
  training's report and the figures measured on held-out text right after it (:mod:`explorer.features.fidelity`).

It is saved beside the model (``<model folder>/features/<name>/``) when that folder takes files, else in the
explorer's cache (``<cache>/features/saved/<model>/<name>/``), written in a temporary folder and renamed into place.
:func:`load` reads ours, SAELens's or Gemma Scope's (:mod:`explorer.features.gemmascope`) from a folder;
:func:`listed` finds a model's, the one shipped in ``assets/features/`` first for the bundled Gemma.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from explorer.core import persist, userfiles
from explorer.core.errors import ExplorerError, shorten
from explorer.features import gemmascope, saelens
from explorer.features.about import About
from explorer.features.dictionary import Dictionary
from explorer.runtime import fence, weights

__all__ = ["OURS", "SHIPPED", "Saved", "check_out", "listed", "load", "name_of", "save", "targets"]

OURS = "features.json"
SHIPPED = Path(__file__).resolve().parents[2] / "assets" / "features"
FOLDER = "features"
MAX_RECORD_BYTES = 4 << 20


@dataclass(frozen=True)
class Saved:
    """A dictionary read from a folder, with what it is of."""

    dictionary: Dictionary
    about: About
    folder: Path
    stamp: str | None = None  # ours: the weights' stamp of the model it was trained on

    def label(self) -> str:
        return f"{self.about.name or self.folder.name} ({self.about.where}, {self.dictionary.width:,} features)"


def name_of(kind: str, site: str, layer: int, width: int, k: int, sparsity: float, seed: int,
            stack: str | None = None) -> str:
    """Our folder's name, e.g. ``topk-resid9-w4096-k32-seed0``."""
    where = f"{stack[:3]}-" if stack else ""
    which = f"k{k}" if kind == "topk" else f"s{sparsity:g}"
    return f"{kind}-{where}{'mlp' if kind == 'transcoder' else site}{layer}-w{width}-{which}-seed{seed}"


def targets(model_path: str | None, model_key: str, name: str) -> list[Path]:
    """Where a model's dictionary ``name`` is saved: beside its weights, then in the cache."""
    cached = persist.cache_dir() / FOLDER / "saved" / persist.fingerprint(model_path or model_key) / name
    return ([Path(model_path) / FOLDER / name] if model_path else []) + [cached]


def _ours(target: Path) -> bool:
    """Whether ``target`` may be (over)written: absent, empty, or a dictionary of ours."""
    return not target.exists() or (target.is_dir() and (not any(target.iterdir()) or (target / OURS).is_file()))


def check_out(out: object) -> Path:
    """A folder typed to save in (``--out``), checked before any training: absent, empty or one of ours."""
    if not isinstance(out, str) or not out.strip():
        raise ExplorerError("--out is empty: name the folder to save the dictionary in.")
    target = Path(fence.check_path_text(out.strip(), "output folder")).expanduser().absolute()
    if not _ours(target):
        raise ExplorerError(f"{shorten(str(target))} already holds other files: name a new or empty folder.")
    return target


def _write(work: Path, d: Dictionary, about: About, record: dict[str, object], hooks: tuple[str, str | None],
           context: int, dtype: torch.dtype) -> None:
    saelens.write(work, d, about, hooks, str(record.get("model") or about.model or ""), context, dtype)
    (work / OURS).write_text(json.dumps(record, indent=1, default=str), encoding="utf-8")


def save(d: Dictionary, about: About, record: dict[str, object], hooks: tuple[str, str | None], context: int,
         places: list[Path], dtype: torch.dtype = torch.float32) -> Path:
    """Write the dictionary (SAELens's files and ``features.json``) into the first of ``places`` that takes it,
    atomically; the folder written."""
    last: OSError | None = None
    for target in [p for p in places if _ours(p)]:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        except OSError as err:  # a read-only model folder: the next place takes it
            last = err
            continue
        try:
            _write(work, d, about, record, hooks, context, dtype)
            persist.publish_dir(work, target)
            return target
        except OSError as err:
            last = err
        finally:
            shutil.rmtree(work, ignore_errors=True)
    raise ExplorerError(f"Saving the dictionary failed ({getattr(last, 'strerror', None) or last or 'no folder'}): "
                        "free some space, or name a folder you can write with --out.")


def _record(folder: Path) -> dict[str, object]:
    data = userfiles.loads_json(userfiles.read_path(folder / OURS, MAX_RECORD_BYTES, OURS), OURS, MAX_RECORD_BYTES)
    return data if isinstance(data, dict) else {}


def _as_about(record: dict[str, object], base: About) -> About:
    def text(key: str) -> str | None:
        value = record.get(key)
        return str(value) if value is not None else None

    layer = record.get("layer")
    measured = record.get("measured")
    return replace(base, format="explorer", kind=str(record.get("kind") or base.kind), name=str(record.get("name") or
                   base.name), model=text("model"), site=text("site"), layer=int(layer) if isinstance(layer, int) else
                   None, stack=text("stack"), hook_in=None, hook_out=None,
                   recipe=record.get("recipe") if isinstance(record.get("recipe"), dict) else None,  # type: ignore[arg-type]
                   training=record.get("training") if isinstance(record.get("training"), dict) else None,  # type: ignore[arg-type]
                   measured=measured if isinstance(measured, dict) else None, corpus=text("corpus"),
                   claims=dict(measured) if isinstance(measured, dict) else {})


def load(folder: str | Path) -> Saved:
    """The dictionary in ``folder``: ours, SAELens's or Gemma Scope's (whichever its files are)."""
    place = fence.check(fence.check_path_text(str(folder), "dictionary folder")) if not isinstance(folder, Path) \
        else folder
    if not place.is_dir():
        raise ExplorerError(f"{shorten(str(folder))} is not a folder: name the folder that holds cfg.json and "
                            "sae_weights.safetensors (SAELens), or params.safetensors (Gemma Scope 2).")
    if saelens.is_saelens(place):
        d, about = saelens.read(place)
        if (place / OURS).is_file():
            record = _record(place)
            stamp = record.get("stamp")
            return Saved(d, _as_about(record, about), place, str(stamp) if stamp else None)
        return Saved(d, about, place)
    if gemmascope.is_gemma_scope(place):
        d, about = gemmascope.read(place)
        return Saved(d, about, place)
    raise ExplorerError(f"{shorten(place.name)} holds no dictionary the explorer reads: SAELens's cfg.json and "
                        "sae_weights.safetensors, or Gemma Scope's params.safetensors / params.npz.")


def _candidates(model_path: str | None, model_key: str, shipped_for: str | None) -> list[Path]:
    roots = [SHIPPED] if shipped_for is not None and model_key == shipped_for else []
    roots += [p.parent for p in targets(model_path, model_key, "x")]
    return [f for root in roots if root.is_dir() for f in sorted(root.iterdir())
            if f.is_dir() and not f.name.startswith(".") and (f / OURS).is_file()]


def listed(model_path: str | None, model_key: str, shipped_for: str | None = None) -> list[tuple[Path, str]]:
    """(folder, label) of the dictionaries saved for a model (``shipped_for``: the key whose shipped ones are
    listed first); only their records are read, and one saved for other weights than these is left out."""
    stamp = weights.weights_stamp(model_path) if model_path else None
    out = []
    for folder in _candidates(model_path, model_key, shipped_for):
        try:
            record = _record(folder)
        except ExplorerError:
            continue
        if folder.parent != SHIPPED and record.get("stamp") not in (None, stamp):
            continue
        where = f"layer {record.get('layer')} {record.get('site')}"
        shipped = " (shipped)" if folder.parent == SHIPPED else ""
        out.append((folder, f"{folder.name}: {record.get('kind')} on the {where}{shipped}"))
    return out
