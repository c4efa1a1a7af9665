"""The decoder as one more column of the fill-mask comparison (same ``ModelFill`` as the masked LMs).

Predictions are the whole-text ranking (score: the candidate's share of the whole-text
probability among the candidates); the left-context ranking rides along as an ``info`` notice so
the column shows both and the CLI's JSON keeps the shape every other model has.
"""

from __future__ import annotations

from collections.abc import Callable

from explorer.core.notices import Notice
from explorer.runtime.loading import LoadedModel
from explorer.runtime.placement import ran_on
from explorer.runtime.resolve import ModelRef
from explorer.tasks.causal.fill import BlankFill, CausalFill, causal_fill
from explorer.tasks.fillmask.result import MaskResult, ModelFill, Prediction

__all__ = ["CANDIDATES", "fill_causal_lm", "to_model_fill"]

CANDIDATES = 50  # left-context candidates re-scored with the whole sentence, per blank


def _mask(blank: BlankFill) -> MaskResult:
    preds = tuple(Prediction(c.token_ids[0], c.text, c.text.strip(), c.share) for c in blank.by_whole)
    return MaskResult(blank.index, -1, preds)  # -1: a decoder has no mask position in its input


def _left_note(fill: CausalFill) -> Notice:
    ranks = "; ".join(", ".join(c.text.strip() for c in b.by_left) for b in fill.blanks)
    return Notice("info", f"Causal model: it reads left to right, so it proposes words from the text before the "
                          f"blank ({ranks}), then ranks them by the likelihood of the whole sentence.")


def to_model_fill(fill: CausalFill, loaded: LoadedModel) -> ModelFill:
    """A :class:`CausalFill` in the shape of a masked LM's column."""
    n_tokens = len(loaded.tokenizer(fill.filled)["input_ids"])
    ran = ran_on(loaded)
    return ModelFill(fill.model, fill.name, fill.untrained, loaded.device, fill.text,
                     tuple(_mask(b) for b in fill.blanks), fill.filled, n_tokens,
                     (_left_note(fill), *fill.notices, *loaded.notices), fill.latency_ms,
                     ran["device_name"], ran["dtype"])


def fill_causal_lm(ref: ModelRef, text: str, top_k: int, loader: Callable[..., LoadedModel],
                   answer_tokens: int = 1) -> ModelFill:
    """A decoder's fill-mask column (``explorer.tasks.fillmask.run.FILLERS`` calls it with a resolved model)."""
    lm = loader(ref, "causal-lm", purpose="Fill-mask")
    fill = causal_fill(lm, text, top_k, candidates=max(CANDIDATES, top_k), answer_tokens=answer_tokens)
    return to_model_fill(fill, lm)
