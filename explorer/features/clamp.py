"""Using a feature: clamp it to a value (or ablate it, a value of 0) at every token, and read the model's prediction
before and after.

At the dictionary's output site the value ``v (..., d)`` goes on as ``v + (c - f_i) * W_dec[i]``: the feature's
contribution to the reconstruction replaced, everything else, the reconstruction's error included, left as the
model computed it (a transcoder's features ``f`` come from its input site in the same forward). Clamping a feature
to its own value adds exactly zero. The hooks are :func:`explorer.features.hooks.run`'s, on the model's view.

The prediction read is the model's own: a decoder's next token after the text; a masked LM's fill of the first mask
in the text (else of its last token); an encoder-decoder's first decoded token. Special tokens are never edited.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from explorer.core.errors import ExplorerError
from explorer.features import about as abouts
from explorer.features import active, hooks, pipeline, windows
from explorer.features.dictionary import Dictionary
from explorer.features.folder import Saved
from explorer.features.hooks import Edit, Tap
from explorer.interventions.pair import token_texts
from explorer.runtime.offload import input_device

if TYPE_CHECKING:
    from explorer.runtime.loading import LoadedModel

__all__ = ["MAX_VALUE", "Clamped", "clamp", "edits", "logits", "position_of"]

MAX_VALUE = 1e4
SHOWN = 10
Target = Callable[[torch.Tensor], torch.Tensor]  # the feature's activations (B, T) -> the value it is clamped to


@dataclass(frozen=True)
class Clamped:
    """The prediction at ``position`` before and after the clamp: top tokens ``(token, probability)`` of each, the
    KL divergence after -> before, and the feature's mean activation on the text's ordinary tokens."""

    feature: int
    value: float
    position: int
    token: str
    read: str  # which prediction (next token, masked fill, first decoded token)
    before: tuple[tuple[str, float], ...]
    after: tuple[tuple[str, float], ...]
    kl: float
    mean_activation: float

    def to_dict(self) -> dict[str, object]:
        return {"feature": self.feature, "value": self.value, "position": self.position, "token": self.token,
                "read": self.read, "kl": round(self.kl, 6), "mean_activation": round(self.mean_activation, 5),
                "before": [{"token": t, "p": round(p, 6)} for t, p in self.before],
                "after": [{"token": t, "p": round(p, 6)} for t, p in self.after]}


def edits(d: Dictionary, taps: list[Tap], feature: int, target: Target, keep: torch.Tensor) -> dict[Tap, Edit]:
    """The edits of one forward: the input site recorded (a transcoder's), the output site's value moved along the
    feature's decoder row by (target - activation) where ``keep (B, T)``."""
    direction = d.direction(feature)
    seen: list[torch.Tensor] = []

    def record(value: torch.Tensor) -> torch.Tensor:
        seen.append(value)
        return value

    def move(value: torch.Tensor) -> torch.Tensor:
        source = seen[-1] if len(taps) > 1 and seen else value
        f = d.encode(source.float())[..., feature]  # (B, T)
        shift = torch.where(keep.to(f.device), target(f) - f, torch.zeros_like(f))
        return value + (shift.unsqueeze(-1) * direction.to(f.device)).to(value.dtype)

    return {taps[0]: record, taps[-1]: move} if len(taps) > 1 else {taps[0]: move}


def logits(loaded: LoadedModel, saved: Saved, win: windows.Windows, feature: int | None = None,
           target: Target | None = None) -> torch.Tensor:
    """``(B, T, V)`` float32 logits of ``win``, clean (no ``feature``) or with ``feature`` clamped to ``target``."""
    taps = abouts.taps(loaded.model, saved.about)
    family = pipeline.family_of(loaded)
    with hooks.session(loaded.model):
        device = input_device(loaded.model)
        d = saved.dictionary if saved.dictionary.W_enc.device == device else saved.dictionary.to(device)
        keep = ~windows.tokens_at(loaded.model, family, saved.about.stack, win).special
        todo = {} if feature is None or target is None else edits(d, taps, feature, target, keep)
        _, out = hooks.run(loaded.model, windows.inputs(loaded.model, family, win.ids.to(device)), edits=todo)
    return out.logits.float().cpu()  # type: ignore[attr-defined]


def position_of(loaded: LoadedModel, win: windows.Windows) -> tuple[int, str]:
    """(the position whose prediction is read, what it is) for this model's family (module docstring)."""
    family = pipeline.family_of(loaded)
    if family == "decoder":
        return int(win.ids.shape[1]) - 1, "the next token"
    if family == "encoder-decoder":
        return 0, "the first decoded token"
    mask = getattr(loaded.tokenizer, "mask_token_id", None)
    found = (win.ids[0] == mask).nonzero(as_tuple=True)[0] if mask is not None else torch.tensor([])
    if len(found):
        return int(found[0]), "the masked token's fill"
    ordinary = (~win.special[0]).nonzero(as_tuple=True)[0]
    return int(ordinary[-1]) if len(ordinary) else 0, "the last token (no mask in the text)"


def _top(probs: torch.Tensor, loaded: LoadedModel) -> tuple[tuple[str, float], ...]:
    values, indices = probs.topk(min(SHOWN, probs.shape[-1]))
    names = token_texts(loaded.tokenizer, tuple(int(i) for i in indices))
    return tuple((n, float(v)) for n, v in zip(names, values, strict=True))


def clamp(loaded: LoadedModel, saved: Saved, feature: int, value: float, text: str) -> Clamped:
    """The prediction before and after ``feature`` is clamped to ``value`` at every ordinary token of ``text``."""
    saved.dictionary.direction(feature)  # range checked, in words
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or abs(value) > MAX_VALUE:
        raise ExplorerError(f"The value must be a number from {-MAX_VALUE:g} to {MAX_VALUE:g} (got {value!r}).")
    win, _ = active.text_windows(loaded, text)
    features, shown = active.read(loaded, saved, win)
    at, what = position_of(loaded, win)
    clean = logits(loaded, saved, win)[0, at].log_softmax(-1)
    moved = logits(loaded, saved, win, feature, lambda f: torch.full_like(f, float(value)))[0, at].log_softmax(-1)
    kl = float((moved.exp() * (moved - clean)).sum())
    ordinary = ~shown.special[0]
    mean = float(features[ordinary, feature].mean()) if bool(ordinary.any()) else 0.0
    token = token_texts(loaded.tokenizer, (int(win.ids[0, at]),))[0]
    return Clamped(feature, float(value), at, token, what, _top(clean.exp(), loaded), _top(moved.exp(), loaded),
                   max(0.0, kl), mean)
