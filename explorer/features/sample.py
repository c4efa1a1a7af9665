"""The text a dashboard shows: held-out windows run through the model and the dictionary once, kept sparse.

The held-out part of the bundled corpus (never trained on) is harvested at the dictionary's input tap like any
harvest (:mod:`explorer.features.harvest`: on disk, keyed by the model's weights and the tap), and every row is
encoded; only the non-zero features are kept, as ``(feature, row, value)`` entries sorted by feature, so one
feature's activations are a slice. With it come each row's token, window and position, and the windows' ids, from
which a context around any row is read back.

:func:`of` keeps the last few samples of this process (a page opens several features of one dictionary).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from explorer.features import about as abouts
from explorer.features import harvest, pipeline
from explorer.features.dictionary import Dictionary
from explorer.features.folder import Saved
from explorer.training.corpus import Corpus

if TYPE_CHECKING:
    from explorer.runtime.loading import LoadedModel

__all__ = ["SAMPLE_TOKENS", "Sample", "build", "of"]

SAMPLE_TOKENS = 4_096  # held-out tokens a dashboard reads: 33 windows of 128 (a first open harvests them once)
SEQ_LEN = 128
ENCODE_ROWS = 2_048  # rows encoded at once ((2,048, width) pre-activations)
KEPT = 4  # samples this process keeps


@dataclass(frozen=True)
class Sample:
    """Encoded held-out rows (see the module docstring); ``n`` rows, ``windows (Wn, T)`` int ids."""

    token: torch.Tensor  # (n,) the token at each row
    window: torch.Tensor  # (n,) its window
    position: torch.Tensor  # (n,) its position in the window
    windows: torch.Tensor  # (Wn, T) the windows' ids as the tapped stack reads them
    feature: torch.Tensor  # (nnz,) sorted
    row: torch.Tensor  # (nnz,)
    value: torch.Tensor  # (nnz,)
    width: int

    @property
    def rows(self) -> int:
        return int(self.token.shape[0])

    def of(self, feature: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(rows, activations) where ``feature`` is active, rows ascending."""
        lo = int(torch.searchsorted(self.feature, feature))
        hi = int(torch.searchsorted(self.feature, feature, right=True))
        rows, values = self.row[lo:hi], self.value[lo:hi]
        order = rows.argsort()
        return rows[order], values[order]

    def counts(self) -> torch.Tensor:
        """(width,) how many rows each feature is active on."""
        return torch.bincount(self.feature, minlength=self.width)

    def maxima(self) -> torch.Tensor:
        """(width,) each feature's largest activation (0 where it never fires)."""
        out = torch.zeros(self.width)
        return out.scatter_reduce(0, self.feature, self.value, reduce="amax", include_self=True)


def _encode(d: Dictionary, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    feats, rows, values = [], [], []
    with torch.no_grad():
        for start in range(0, x.shape[0], ENCODE_ROWS):
            f = d.encode(x[start:start + ENCODE_ROWS].float())
            r, c = f.nonzero(as_tuple=True)
            feats.append(c)
            rows.append(r + start)
            values.append(f[r, c])
    feature, row, value = torch.cat(feats), torch.cat(rows), torch.cat(values)
    order = torch.argsort(feature * (x.shape[0] + 1) + row)
    return feature[order], row[order], value[order]


def build(loaded: LoadedModel, saved: Saved, corpus: Corpus, tokens: int = SAMPLE_TOKENS) -> Sample:
    """The sample of ``saved`` on ``loaded`` (the held-out part of ``corpus``)."""
    taps = abouts.taps(loaded.model, saved.about)[:1]
    got = harvest.harvest(loaded, pipeline.family_of(loaded), taps, saved.about.stack, corpus.heldout,
                          f"{corpus.name} (held out)", tokens, SEQ_LEN, 0, stamp=pipeline.stamp_of(loaded))
    parts = [got.part(i) for i in range(got.parts)]
    columns: dict[str, list[torch.Tensor]] = {k: [] for k in ("x", "token", "window", "position")}
    offsets, ids = 0, []
    for p in parts:
        for k in columns:
            columns[k].append(p[k] + offsets if k == "window" else p[k])
        ids.append(p["ids"])
        offsets += int(p["ids"].shape[0])
    x = torch.cat(columns["x"])
    feature, row, value = _encode(saved.dictionary, x)
    return Sample(torch.cat(columns["token"]).long(), torch.cat(columns["window"]).long(),
                  torch.cat(columns["position"]).long(), torch.cat(ids).long(), feature, row, value,
                  saved.dictionary.width)


_KEPT: OrderedDict[tuple[str, ...], Sample] = OrderedDict()
_LOCK = threading.Lock()


def of(loaded: LoadedModel, saved: Saved, corpus: Corpus, tokens: int = SAMPLE_TOKENS) -> Sample:
    """:func:`build`, remembered for the last :data:`KEPT` (model, weights, dictionary) of this process."""
    key = (loaded.key, pipeline.stamp_of(loaded), loaded.dtype, str(saved.folder), saved.about.where,
           str(saved.folder.stat().st_mtime_ns) if saved.folder.exists() else "", corpus.name, str(tokens))
    with _LOCK:
        if key in _KEPT:
            _KEPT.move_to_end(key)
            return _KEPT[key]
    made = build(loaded, saved, corpus, tokens)
    with _LOCK:
        _KEPT[key] = made
        while len(_KEPT) > KEPT:
            _KEPT.popitem(last=False)
    return made
