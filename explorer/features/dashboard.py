"""One feature's dashboard, as SAEDashboard and Neuronpedia lay it out, from the held-out sample.

- **top contexts**: the rows where the feature is most active, each with the tokens around it and the feature's
  activation at every one of them (for shading);
- **quantile groups**: the active rows split into :data:`BANDS` bands of equal width between 0 and the largest
  activation, each with how many rows fall in it and a few examples (the weak band shows what the feature does
  when it barely fires);
- **activation density**: the share of tokens it is active on, and a histogram of log10 of its activations;
- **logit effect**: the decoder direction read through the model's own final norm and head (a masked LM's MLM
  head): the tokens it raises most and lowers most. A model without a head (the bundled MiniLM), or an encoder
  stack of T5/BART whose head reads another stack, shows the input embedding rows nearest the direction instead
  (cosine), and says so.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import torch

from explorer.core.errors import ExplorerError
from explorer.features import about as abouts
from explorer.features.folder import Saved
from explorer.features.sample import Sample
from explorer.internals import located, sites
from explorer.interventions.pair import token_texts

if TYPE_CHECKING:
    from explorer.runtime.loading import LoadedModel

__all__ = ["BANDS", "Card", "Context", "card", "context", "logit_effect", "stream_direction"]

TOP = 12  # top contexts
BANDS = 5
PER_BAND = 3
BEFORE, AFTER = 12, 4  # tokens shown around a context's row
LOGITS = 10
HISTOGRAM_BINS = 30
HEAD = "the decoder direction through the model's final norm and head"
NEAREST = "no head reads this stack: the input embedding rows nearest the decoder direction (cosine)"


@dataclass(frozen=True)
class Context:
    """Tokens around one row, the feature's activation at each, and which token is the row."""

    tokens: tuple[str, ...]
    acts: tuple[float, ...]
    focus: int
    value: float

    def to_dict(self) -> dict[str, object]:
        return {"tokens": list(self.tokens), "acts": [round(a, 4) for a in self.acts], "focus": self.focus,
                "value": round(self.value, 4)}


@dataclass(frozen=True)
class Card:
    """One feature's dashboard (see the module docstring)."""

    feature: int
    density: float  # share of the sample's tokens it is active on
    max_act: float
    mean_act: float  # over the tokens it is active on
    tokens: int  # the sample's tokens
    top: tuple[Context, ...]
    bands: tuple[tuple[float, float, int, tuple[Context, ...]], ...]  # (low, high, rows, examples)
    histogram: tuple[tuple[float, ...], tuple[int, ...]]  # (log10 bin edges, counts)
    raises: tuple[tuple[str, float], ...]
    lowers: tuple[tuple[str, float], ...]
    effect: str  # how raises/lowers were read (HEAD or NEAREST)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["top"] = [c.to_dict() for c in self.top]
        out["bands"] = [{"low": round(lo, 4), "high": round(hi, 4), "rows": n, "examples": [c.to_dict() for c in ex]}
                        for lo, hi, n, ex in self.bands]
        out["histogram"] = {"log10_edges": [round(e, 4) for e in self.histogram[0]], "counts": list(self.histogram[1])}
        out["raises"] = [{"token": t, "value": round(v, 4)} for t, v in self.raises]
        out["lowers"] = [{"token": t, "value": round(v, 4)} for t, v in self.lowers]
        return out


def context(loaded: LoadedModel, sample: Sample, row: int, acts: dict[int, float]) -> Context:
    """The tokens around ``row`` of the sample, with the activations ``acts`` (row -> value) at each."""
    window, position = int(sample.window[row]), int(sample.position[row])
    ids = sample.windows[window]
    lo, hi = max(0, position - BEFORE), min(int(ids.shape[0]), position + AFTER + 1)
    in_window = (sample.window == window).nonzero(as_tuple=True)[0]  # special tokens have no row
    row_of = {int(sample.position[r]): int(r) for r in in_window}
    texts = token_texts(loaded.tokenizer, tuple(int(i) for i in ids[lo:hi]))
    values = tuple(acts.get(row_of[p], 0.0) if p in row_of else 0.0 for p in range(lo, hi))
    return Context(texts, values, position - lo, acts.get(row, 0.0))


def stream_direction(loaded: LoadedModel, saved: Saved, feature: int) -> torch.Tensor:
    """``(d_model,)`` what one unit of ``feature`` adds to the stream: its decoder row, through the output projection
    when the dictionary writes at a projection's input (Gemma Scope's attention SAEs)."""
    v = saved.dictionary.direction(feature).float()
    tap = abouts.taps(loaded.model, saved.about)[-1]
    if tap.side == "input":
        module = located.module(loaded.model, tap.path)
        weight = getattr(module, "weight", None)
        if isinstance(weight, torch.Tensor) and weight.dim() == 2 and weight.shape[1] == v.shape[0]:
            v = weight.float() @ v
    return v


def logit_effect(loaded: LoadedModel, saved: Saved, feature: int,
                 ) -> tuple[tuple[tuple[str, float], ...], tuple[tuple[str, float], ...], str]:
    """(tokens raised most, tokens lowered most, how they were read): see the module docstring."""
    v = stream_direction(loaded, saved, feature)
    model = loaded.model
    s = sites.of(model)
    with torch.no_grad():
        if s.has_head and saved.about.stack != "encoder" and v.shape[0] == s.d_model:
            p = next(model.parameters())
            scores, how = s.readout(model, v.to(device=p.device, dtype=p.dtype)[None])[0].float().cpu(), HEAD
        else:
            embeddings = model.get_input_embeddings()
            assert isinstance(embeddings, torch.nn.Embedding)
            table = embeddings.weight.float().cpu()
            if table.shape[1] != v.shape[0]:
                raise ExplorerError("This dictionary's direction does not live in the embeddings' space: no logit "
                                    "effect can be read for it.")
            scores, how = torch.nn.functional.cosine_similarity(table, v.cpu()[None], dim=-1), NEAREST
    top, bottom = scores.topk(LOGITS), (-scores).topk(LOGITS)
    names = token_texts(loaded.tokenizer, tuple(int(i) for i in torch.cat([top.indices, bottom.indices])))
    raises = tuple((n, float(x)) for n, x in zip(names[:LOGITS], top.values, strict=True))
    lowers = tuple((n, float(-x)) for n, x in zip(names[LOGITS:], bottom.values, strict=True))
    return raises, lowers, how


def _histogram(values: torch.Tensor) -> tuple[tuple[float, ...], tuple[int, ...]]:
    if not len(values):
        return (), ()
    logs = values.clamp(min=1e-8).log10()
    lo, hi = float(logs.min()), float(logs.max())
    hi = hi if hi > lo else lo + 1e-3
    counts = torch.histc(logs, bins=HISTOGRAM_BINS, min=lo, max=hi)
    edges = [lo + (hi - lo) * i / HISTOGRAM_BINS for i in range(HISTOGRAM_BINS + 1)]
    return tuple(edges), tuple(int(c) for c in counts)


def card(loaded: LoadedModel, saved: Saved, sample: Sample, feature: int) -> Card:
    """Feature ``feature``'s dashboard from ``sample``."""
    saved.dictionary.direction(feature)  # range checked, in words
    rows, values = sample.of(feature)
    acts = {int(r): float(v) for r, v in zip(rows, values, strict=True)}
    order = values.argsort(descending=True)
    top = tuple(context(loaded, sample, int(rows[i]), acts) for i in order[:TOP])
    peak = float(values.max()) if len(values) else 0.0
    bands = []
    for b in range(BANDS):
        lo, hi = peak * b / BANDS, peak * (b + 1) / BANDS
        inside = ((values > lo) & (values <= hi)).nonzero(as_tuple=True)[0]
        picks = inside[torch.linspace(0, len(inside) - 1, min(PER_BAND, len(inside))).long()] if len(inside) else inside
        bands.append((lo, hi, int(len(inside)), tuple(context(loaded, sample, int(rows[i]), acts) for i in picks)))
    raises, lowers, how = logit_effect(loaded, saved, feature)
    mean = float(values.mean()) if len(values) else 0.0
    return Card(feature, len(values) / max(1, sample.rows), peak, mean if math.isfinite(mean) else 0.0, sample.rows,
                top, tuple(reversed(bands)), _histogram(values), raises, lowers, how)
