"""How faithful a dictionary is to the model, measured on held-out text: the numbers every SAE paper reports.

Over the held-out windows' ordinary tokens (special tokens are left as the model computes them, here as in
training):

- **L0**: the mean number of features active (non-zero) per token;
- **FVE**, the fraction of variance explained: ``1 - sum |y - y_hat|^2 / sum |y - mean(y)|^2``, where ``y`` is the
  site's activation (a transcoder's: the MLP's output) and ``y_hat`` the dictionary's reconstruction;
- **CE clean / spliced / zero**: the model's own loss with the site as it is, with the reconstruction spliced in
  at every ordinary token, and with the site zeroed there: next-token loss for a decoder, the masked-LM loss at
  15% of the tokens (masked with a seeded draw, the same in all three runs) for a masked LM, the decoder's loss
  rebuilding the window (teacher forced) for T5 and BART. A model without a head (the bundled MiniLM) has no loss:
  only L0 and FVE are measured, and the result says so;
- **CE recovered**: ``(zero - spliced) / (zero - clean)``: 1 when splicing costs nothing, 0 when it is as bad as
  removing the site;
- **dead** and **dense** fractions: features that never fire on these tokens, and features that fire on more
  than 10% of them.

:func:`logits` runs one window with the site clean, spliced, spliced with its error term added back (the model's
own logits again: the oracle that the splice is exact) or zeroed.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

import torch

from explorer.features import hooks, windows
from explorer.features.dictionary import Dictionary
from explorer.features.hooks import Tap
from explorer.internals import sites
from explorer.runtime.offload import input_device

if TYPE_CHECKING:
    from explorer.runtime.loading import LoadedModel

__all__ = ["DENSE", "MASK_SHARE", "MODES", "Fidelity", "logits", "measure", "on"]

MODES = ("clean", "spliced", "error", "zero")
MASK_SHARE = 0.15  # BERT's share of masked tokens
DENSE = 0.10  # a feature firing on more than this share of tokens is dense
WINDOWS_PER_FORWARD = 2  # a decoder's full logits (Gemma 3: 262,144 per token) are the memory of a loss run
LOSSES = {"decoder": "next-token loss", "encoder": "masked-LM loss at 15% of the tokens",
          "encoder-decoder": "the decoder's loss rebuilding the text (teacher forced)"}
NO_HEAD = ("This model has no language-model head (like the bundled all-MiniLM-L6-v2): there is no loss to splice "
           "into, so only L0 and the variance explained are measured.")


@dataclass(frozen=True)
class Fidelity:
    """The numbers of the module docstring (losses in nats; None where the model has no loss)."""

    l0: float
    fve: float
    ce_clean: float | None
    ce_spliced: float | None
    ce_zero: float | None
    ce_recovered: float | None
    dead_fraction: float
    dense_fraction: float
    tokens: int
    loss: str | None  # which loss the CE figures are
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        return {k: (round(v, 6) if isinstance(v, float) and math.isfinite(v) else v) for k, v in asdict(self).items()}


@dataclass
class _Totals:
    rows: int = 0
    active: float = 0.0
    error: float = 0.0
    total: float = 0.0
    sums: torch.Tensor | None = None
    fired: torch.Tensor | None = None

    def add(self, y: torch.Tensor, y_hat: torch.Tensor, features: torch.Tensor) -> None:
        y, y_hat = y.double(), y_hat.double()
        self.rows += y.shape[0]
        self.active += float((features > 0).sum())
        self.error += float((y - y_hat).pow(2).sum())
        self.total += float(y.pow(2).sum())
        sums, fired = y.sum(dim=0), (features > 0).sum(dim=0)
        self.sums = sums if self.sums is None else self.sums + sums
        self.fired = fired if self.fired is None else self.fired + fired

    def fve(self) -> float:
        assert self.sums is not None
        variance = self.total - float(self.sums.pow(2).sum()) / max(1, self.rows)
        return 1.0 - self.error / variance if variance > 0 else float("nan")


def on(d: Dictionary, device: torch.device) -> Dictionary:
    """``d`` on ``device``: itself when it is there, else a copy (a dictionary a page caches is shared)."""
    return d if d.W_enc.device == device else copy.deepcopy(d).to(device)


def _mask(family: str, win: windows.Windows, seed: int, mask_id: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """(the input ids, the labels: -100 where no loss is taken) of a loss run."""
    if family == "decoder":
        labels = win.ids.clone()
        return win.ids, labels
    if family == "encoder-decoder":
        return win.ids, win.ids.clone()
    g = torch.Generator().manual_seed(seed)
    picked = (torch.rand(win.ids.shape, generator=g) < MASK_SHARE) & ~win.special
    ids = torch.where(picked, torch.full_like(win.ids, int(mask_id or 0)), win.ids)
    return ids, torch.where(picked, win.ids, torch.full_like(win.ids, -100))


def _edit(d: Dictionary, mode: str, keep: torch.Tensor, given: torch.Tensor | None,
          ) -> Callable[[torch.Tensor], torch.Tensor]:
    """The edit of the output tap: ``keep (B, T)`` marks the ordinary tokens; ``given`` is a transcoder's
    reconstruction from its input (an SAE reconstructs the live value itself)."""
    def edit(value: torch.Tensor) -> torch.Tensor:
        if mode == "zero":
            new = torch.zeros_like(value)
        else:
            recon = given if given is not None else d(value.float())
            recon = recon.to(device=value.device, dtype=value.dtype)
            new = recon + (value - recon) if mode == "error" else recon
        return torch.where(keep.to(value.device).unsqueeze(-1), new, value)
    return edit


def _reconstruction(model: torch.nn.Module, d: Dictionary, taps: Sequence[Tap], inputs: dict[str, object],
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(target y, reconstruction, features) at every position of a batch: the forward stopped at the last tap."""
    got, _ = hooks.run(model, inputs, reads=taps, stop_at=taps[-1])
    x, y = got[taps[0]].float(), got[taps[-1]].float()
    features = d.encode(x)
    return y, d.decode(features, x), features


def logits(loaded: LoadedModel, family: str, taps: Sequence[Tap], d: Dictionary, ids: torch.Tensor,
           mode: str, special: torch.Tensor | None = None) -> torch.Tensor:
    """``(B, T, V)`` float32 logits of the windows ``ids`` with the site in ``mode`` (module docstring), the
    ordinary tokens (not ``special``) edited."""
    keep = ~special if special is not None else torch.ones_like(ids, dtype=torch.bool)
    with hooks.session(loaded.model):
        d = on(d, input_device(loaded.model))
        inputs = windows.inputs(loaded.model, family, ids.to(input_device(loaded.model)))
        given = None
        if len(taps) > 1 and mode in ("spliced", "error"):
            _, given, _ = _reconstruction(loaded.model, d, taps, inputs)
        edits = {} if mode == "clean" else {taps[-1]: _edit(d, mode, keep, given)}
        _, out = hooks.run(loaded.model, inputs, edits=edits)
    return out.logits.float().cpu()  # type: ignore[attr-defined]


def _loss(loaded: LoadedModel, family: str, taps: Sequence[Tap], d: Dictionary, win: windows.Windows,
          seed: int) -> tuple[float, float, float, int]:
    """(clean, spliced, zero) summed losses of a batch of windows, and the tokens they are over."""
    ids, labels = _mask(family, win, seed, getattr(loaded.tokenizer, "mask_token_id", None))
    if family == "decoder":
        labels = torch.where(win.special, torch.full_like(labels, -100), labels)
    keep = ~win.special
    sums = []
    with hooks.session(loaded.model):
        device = input_device(loaded.model)
        d = on(d, device)
        inputs = {**windows.inputs(loaded.model, family, ids.to(device)), "labels": labels.to(device)}
        given = _reconstruction(loaded.model, d, taps, inputs)[1] if len(taps) > 1 else None
        for mode in ("clean", "spliced", "zero"):
            edits = {} if mode == "clean" else {taps[-1]: _edit(d, mode, keep, given)}
            _, out = hooks.run(loaded.model, inputs, edits=edits)
            sums.append(float(out.loss))  # type: ignore[attr-defined]
    count = int((labels[:, 1:] != -100).sum()) if family == "decoder" else int((labels != -100).sum())
    return sums[0] * count, sums[1] * count, sums[2] * count, count


def measure(loaded: LoadedModel, family: str, taps: Sequence[Tap], stack: str | None, d: Dictionary,
            held: windows.Windows, seed: int = 0, loss_windows: int | None = None) -> Fidelity:
    """Every number of the module docstring on the held-out windows ``held`` (the losses on the first
    ``loss_windows`` of them: each loss run reads a decoder's whole head at every token)."""
    shown = windows.tokens_at(loaded.model, family, stack, held)
    totals = _Totals()
    with hooks.session(loaded.model):
        d = on(d, input_device(loaded.model))
        step = WINDOWS_PER_FORWARD * 4  # no head runs here: more windows at once
        for start in range(0, held.count, step):
            part, seen = held.part(start, start + step), shown.part(start, start + step)
            inputs = windows.inputs(loaded.model, family, part.ids.to(input_device(loaded.model)))
            y, y_hat, features = _reconstruction(loaded.model, d, taps, inputs)
            keep = ~seen.special.to(y.device)
            totals.add(y[keep].cpu(), y_hat[keep].cpu(), features[keep].cpu())
    fired = totals.fired if totals.fired is not None else torch.zeros(d.width)
    rate = fired.double() / max(1, totals.rows)
    base = Fidelity(totals.active / max(1, totals.rows), totals.fve(), None, None, None, None,
                    float((fired == 0).double().mean()), float((rate > DENSE).double().mean()), totals.rows, None,
                    NO_HEAD)
    if not sites.of(loaded.model).has_head:
        return base
    clean = spliced = zero = 0.0
    count = 0
    for start in range(0, min(held.count, loss_windows or held.count), WINDOWS_PER_FORWARD):
        c, s, z, n = _loss(loaded, family, taps, d, held.part(start, start + WINDOWS_PER_FORWARD), seed + start)
        clean, spliced, zero, count = clean + c, spliced + s, zero + z, count + n
    clean, spliced, zero = (v / max(1, count) for v in (clean, spliced, zero))
    recovered = (zero - spliced) / (zero - clean) if zero != clean else float("nan")
    return replace(base, ce_clean=clean, ce_spliced=spliced, ce_zero=zero, ce_recovered=recovered,
                   loss=LOSSES[family], note="")
