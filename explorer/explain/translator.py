"""The tuned lens's translators (Belrose et al. 2023): one affine map per layer, saved beside the model.

The logit lens reads a layer's stream ``h_l`` through the model's final norm and head as if it were the last
layer's; early layers speak another "basis", and their reading is poor. A translator
``h -> h + A_l (h / s_l) + b_l`` (``A_l`` and ``b_l`` zero at first: the identity, i.e. the logit lens) is trained
per layer so that its reading matches the final distribution (:mod:`explorer.explain.tuning`); the last layer
needs none. ``s_l`` is each coordinate's spread at that layer, measured once before training: streams hold a few
coordinates hundreds of times larger than the rest, and without it Adam's first steps (the same size for every
entry of ``A``) move those coordinates' columns far too much (measured on Gemma 3: the late layers got worse).

They are saved in ``<the model's folder>/tuned-lens/`` (``translators.safetensors`` and ``tuned-lens.json``,
written atomically) when the folder is writable, else in the explorer's cache, keyed by the folder; either is
found again by :func:`load` while the model's weights are unchanged (their stamp is kept beside them).

>>> t = Translators(2, 4)
>>> import torch
>>> h = torch.randn(3, 4)
>>> bool(torch.equal(t(0, h), h))  # the identity before training
True
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import torch

from explorer.core import persist, userfiles
from explorer.core.errors import ExplorerError, shorten
from explorer.runtime import fence, weights

__all__ = ["FOLDER", "Translators", "check_out", "find", "folders", "load", "save"]

FOLDER = "tuned-lens"
MAX_CARD_BYTES = 1 << 20
_WEIGHTS, _CARD = "translators.safetensors", "tuned-lens.json"


class Translators(torch.nn.Module):
    """``layers`` affine maps ``(d) -> (d)``, one per stream below the last block's output."""

    scale: torch.Tensor  # (L, d), a buffer

    def __init__(self, layers: int, width: int) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(layers, width, width))  # (L, d, d)
        self.bias = torch.nn.Parameter(torch.zeros(layers, width))  # (L, d)
        self.register_buffer("scale", torch.ones(layers, width))  # (L, d) each coordinate's spread

    @property
    def layers(self) -> int:
        return int(self.weight.shape[0])

    def forward(self, layer: int, hidden: torch.Tensor) -> torch.Tensor:
        """``(..., d)`` stream of ``layer`` -> its translation; the last layer (``layers``) passes unchanged."""
        if layer >= self.layers:
            return hidden
        w, b = self.weight[layer].to(hidden.dtype), self.bias[layer].to(hidden.dtype)
        s = self.scale[layer].to(hidden.dtype)
        return hidden + (hidden / s) @ w.T + b


def folders(path: str | None, key: str) -> list[Path]:
    """Where a model's translators may be: beside its weights, then in the cache (keyed by the folder or name)."""
    cached = persist.cache_dir() / FOLDER / persist.fingerprint(path or key)
    return ([Path(path) / FOLDER] if path else []) + [cached]


def _ours(target: Path) -> bool:
    """Whether ``target`` may be (over)written: absent, empty, or an earlier tuned lens (its card inside)."""
    return not target.exists() or (target.is_dir() and (not any(target.iterdir()) or (target / _CARD).is_file()))


def check_out(out: object) -> Path:
    """A folder typed for the translators (``--out``), checked before any training: a path the OS accepts, absent,
    empty or an earlier tuned lens (a folder of anything else is never replaced), in a folder that takes files."""
    if not isinstance(out, str) or not out.strip():
        raise ExplorerError("--out is empty: name the folder to save the tuned lens in (or leave it out to save it "
                            "beside the model).")
    target = Path(fence.check_path_text(out.strip(), "output folder")).expanduser().absolute()
    try:
        if not _ours(target):
            raise ExplorerError(f"{shorten(str(target))} already holds other files: name a new or empty folder "
                                "(a tuned lens replaces the folder it is saved in).")
        where = target.parent
        while not where.exists() and where != where.parent:
            where = where.parent
        tempfile.TemporaryFile(dir=where).close()  # it takes a new file (read-only disks are refused now)
    except OSError as err:
        raise ExplorerError(f"Cannot save the tuned lens in {shorten(str(target))}: {err.strerror or err}. Name "
                            "another --out folder.") from err
    return target


def save(translators: Translators, card: dict[str, object], path: str | None, key: str,
         out: str | Path | None = None) -> Path:
    """Write the translators and their card (``out``, else beside the model, else the cache) atomically; the
    folder written."""
    targets = [check_out(str(out))] if out is not None else [f for f in folders(path, key) if _ours(f)]
    card = {**card, "stamp": weights.weights_stamp(path), "model": key}
    last: OSError | None = None
    for target in targets:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        except OSError as err:  # a read-only model folder (an installed package): the cache takes it
            last = err
            continue
        try:
            from safetensors.torch import save_file  # heavy: only a finished training writes

            save_file({name: t.detach().cpu().contiguous() for name, t in translators.state_dict().items()},
                      str(work / _WEIGHTS))
            (work / _CARD).write_text(json.dumps(card, indent=1), encoding="utf-8")
            persist.publish_dir(work, target)
            return target
        except OSError as err:
            last = err
        finally:
            shutil.rmtree(work, ignore_errors=True)
    raise ExplorerError(f"Saving the tuned lens failed ({getattr(last, 'strerror', None) or last}): free some space, "
                        "or give a folder you can write with --out.")


def _card(folder: Path) -> dict[str, object] | None:
    if not (folder / _CARD).is_file() or not (folder / _WEIGHTS).is_file():
        return None
    card = userfiles.loads_json(userfiles.read_path(folder / _CARD, MAX_CARD_BYTES, _CARD), _CARD, MAX_CARD_BYTES)
    return card if isinstance(card, dict) else None


def find(path: str | None, key: str) -> dict[str, object] | None:
    """The card of the translators trained for this model's current weights (held-out KL, steps...), or None;
    nothing but the card is read."""
    for place in folders(path, key):
        card = _card(place)
        if card is not None and card.get("stamp") == weights.weights_stamp(path):
            return {**card, "folder": fence.public(str(place))}
    return None


def load(path: str | None, key: str, layers: int, width: int,
         folder: str | Path | None = None) -> tuple[Translators, dict[str, object]] | None:
    """The translators trained for this model's current weights (``folder``: that folder only), or None."""
    from safetensors.torch import load_file

    for place in [Path(folder)] if folder is not None else folders(path, key):
        card = _card(place)
        if card is None or card.get("stamp") != weights.weights_stamp(path):
            continue
        state = load_file(str(place / _WEIGHTS))
        if tuple(state["weight"].shape) != (layers, width, width):
            raise ExplorerError(f"The tuned lens in {fence.public(str(place))} was trained for another shape of "
                                "model: train it again for this one.")
        made = Translators(layers, width)
        made.load_state_dict(state)
        return made.eval(), {**card, "folder": fence.public(str(place))}
    return None
