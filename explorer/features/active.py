"""The features a typed text makes active, token by token: the dictionary's input site read on the text, encoded.

The text is tokenized as the model reads it (its own special tokens added, cut to :data:`MAX_TOKENS`), run once
through the model's view (:func:`explorer.features.hooks.run`, stopped at the site), and every position's features
are ranked by activation; special tokens (Gemma's ``<bos>``) are listed with none, as in training. An
encoder-decoder's decoder stack reads the text shifted right (teacher forced: its start token first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from explorer.core.limits import ATTENTION_TEXT_CHARS
from explorer.core.userinput import require_text
from explorer.features import about as abouts
from explorer.features import hooks, pipeline, windows
from explorer.features.folder import Saved
from explorer.interventions.pair import token_texts
from explorer.runtime.offload import input_device

if TYPE_CHECKING:
    from explorer.runtime.loading import LoadedModel

__all__ = ["MAX_TOKENS", "Active", "TokenFeatures", "active", "check_text", "read", "text_windows"]

MAX_TOKENS = 256  # a typed text's tokens read: the table shows one row each
TOP = 8


@dataclass(frozen=True)
class TokenFeatures:
    """One position: its token and its most active features ``(feature, activation)``, largest first."""

    position: int
    token: str
    special: bool
    features: tuple[tuple[int, float], ...]

    def to_dict(self) -> dict[str, object]:
        return {"position": self.position, "token": self.token, "special": self.special,
                "features": [{"feature": f, "activation": round(a, 5)} for f, a in self.features]}


@dataclass(frozen=True)
class Active:
    """Every position of a text with its top features, and where the dictionary reads."""

    where: str
    width: int
    tokens: tuple[TokenFeatures, ...]
    cut: bool  # the text was longer than MAX_TOKENS

    def to_dict(self) -> dict[str, object]:
        return {"where": self.where, "width": self.width, "cut": self.cut, "tokens": [t.to_dict() for t in self.tokens]}


def check_text(text: object) -> str:
    return require_text(text, what="text", empty_hint="type a sentence to see the features it makes active.",
                        max_chars=ATTENTION_TEXT_CHARS, limit_note=f"only the first {MAX_TOKENS} tokens are read")


def text_windows(loaded: LoadedModel, text: str) -> tuple[windows.Windows, bool]:
    """The text as one window ``(1, T)`` with its special tokens marked, and whether it was cut."""
    ids = [int(i) for i in loaded.tokenizer(check_text(text), add_special_tokens=True)["input_ids"]]
    cut = len(ids) > MAX_TOKENS
    row = torch.tensor([ids[:MAX_TOKENS]], dtype=torch.long)
    specials = sorted({int(t) for t in getattr(loaded.tokenizer, "all_special_ids", []) or []})
    special = torch.isin(row, torch.tensor(specials, dtype=torch.long)) if specials else \
        torch.zeros_like(row, dtype=torch.bool)
    return windows.Windows(row, special), cut


def read(loaded: LoadedModel, saved: Saved, win: windows.Windows) -> tuple[torch.Tensor, windows.Windows]:
    """(features ``(T, width)`` at every position of the one window ``win``, the window as the tapped stack reads
    it)."""
    taps = abouts.taps(loaded.model, saved.about)[:1]
    family = pipeline.family_of(loaded)
    with hooks.session(loaded.model):
        device = input_device(loaded.model)
        got, _ = hooks.run(loaded.model, windows.inputs(loaded.model, family, win.ids.to(device)), reads=taps,
                           stop_at=taps[0])
    with torch.no_grad():
        features = saved.dictionary.encode(got[taps[0]][0].float().cpu())
    return features, windows.tokens_at(loaded.model, family, saved.about.stack, win)


def active(loaded: LoadedModel, saved: Saved, text: str, top: int = TOP) -> Active:
    """Each token of ``text`` with its ``top`` most active features (see the module docstring)."""
    win, cut = text_windows(loaded, text)
    features, shown = read(loaded, saved, win)
    names = token_texts(loaded.tokenizer, tuple(int(i) for i in shown.ids[0]))
    rows = []
    for t, name in enumerate(names):
        special = bool(shown.special[0, t])
        values, indices = features[t].topk(min(top, features.shape[-1]))
        picked = () if special else tuple((int(i), float(v)) for v, i in zip(values, indices, strict=True) if v > 0)
        rows.append(TokenFeatures(t, name, special, picked))
    return Active(saved.about.where, saved.dictionary.width, tuple(rows), cut)
