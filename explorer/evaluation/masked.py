"""A masked LM's score of a continuation: its pseudo-log-likelihood (Salazar et al., 2020, "Masked Language Model
Scoring", ACL).

A masked LM gives no probability of a text left to right. Salazar et al. mask each token in turn, with the rest of
the text visible, and sum the log-probabilities the model gives each token back: the pseudo-log-likelihood (PLL).
Here the tokens of the continuation are masked one at a time in ``context + continuation`` and only theirs are
summed, so choices are compared by how well the model restores each of them in place. It is not a probability
of the text (the terms are not a chain rule), so PLLs compare choices of one model, not models with decoders.

A token is the continuation's when it ends after the context's last character (a token straddling the boundary
is the continuation's, as on a served model). Every masked copy of every choice of an example goes through the
model in padded batches sized by :mod:`explorer.runtime.activations`.

>>> continuation_positions([(0, 0), (0, 3), (4, 7), (8, 13), (0, 0)], [True, False, False, False, True], 7)
[3]
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from explorer.core.errors import ExplorerError
from explorer.core.locks import lock_of
from explorer.evaluation.score import Group, Score, each_example, where_fields
from explorer.runtime import activations, cancel
from explorer.runtime.loading import LoadedModel
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on

__all__ = ["METHOD", "MaskedScorer", "continuation_positions", "masked_rows"]

MAX_ROWS = 64  # masked copies in one forward at most (activations may allow fewer)
METHOD = ("pseudo-log-likelihood (Salazar et al. 2020): each continuation token masked in turn with the whole text "
          "visible, the log-probabilities of the masked tokens summed; comparable between choices of one model, "
          "not a probability of the text")


def continuation_positions(offsets: Sequence[tuple[int, int]], special: Sequence[bool], boundary: int) -> list[int]:
    """Positions of the tokens that end after ``boundary`` (characters), special tokens left out."""
    return [i for i, ((_, end), sp) in enumerate(zip(offsets, special, strict=True)) if not sp and end > boundary]


def masked_rows(ids: Sequence[int], positions: Sequence[int], mask_id: int) -> list[list[int]]:
    """One copy of ``ids`` per position with that token replaced by the mask token.

    >>> masked_rows([5, 6, 7], [1, 2], 0)
    [[5, 0, 7], [5, 6, 0]]
    """
    rows = []
    for p in positions:
        row = list(ids)
        row[p] = mask_id
        rows.append(row)
    return rows


def _limit(loaded: LoadedModel) -> int:
    tok_max = int(getattr(loaded.tokenizer, "model_max_length", 512) or 512)
    pos = int(getattr(loaded.model.config, "max_position_embeddings", 512) or 512)
    return min(tok_max, pos, 4096)


class MaskedScorer:
    """Continuations scored by a local masked LM (``loaded`` as ``masked-lm``) by pseudo-log-likelihood."""

    family = "masked"
    method = METHOD

    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded, self.key, self.untrained = loaded, loaded.key, bool(loaded.untrained)
        mask = getattr(loaded.tokenizer, "mask_token_id", None)
        if mask is None:
            raise ExplorerError(f"{loaded.key}'s tokenizer has no mask token: pseudo-log-likelihood needs a masked "
                                "LM (bert-base, roberta-base, ...).")
        self.mask_id, self.limit = int(mask), _limit(loaded)

    def where(self) -> dict[str, str]:
        return where_fields(ran_on(self.loaded))

    def check(self, groups: Sequence[Group]) -> None:
        """Nothing to refuse before tokenizing (a continuation cut off by the model's limit is found then)."""

    def score(self, groups: Sequence[Group]) -> list[list[Score]]:
        return each_example(self.example, groups)

    def _encode(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        tok = self.loaded.tokenizer
        with lock_of(tok):
            enc = tok(context + continuation, return_offsets_mapping=True, truncation=True, max_length=self.limit,
                      return_special_tokens_mask=True)
        ids = [int(i) for i in enc["input_ids"]]
        positions = continuation_positions([tuple(o) for o in enc["offset_mapping"]],
                                           [bool(s) for s in enc["special_tokens_mask"]], len(context.rstrip()))
        if not positions:
            raise ExplorerError(f"A continuation has no token of its own within {self.loaded.key}'s "
                                f"{self.limit}-token limit: shorten the context.")
        return ids, positions

    def example(self, context: str, continuations: Sequence[str]) -> list[Score]:
        """PLL of every continuation: all their masked copies in shared padded batches."""
        encoded = [self._encode(context, c) for c in continuations]
        rows = [(k, ids, p) for k, (ids, positions) in enumerate(encoded) for p in positions]
        lps, hits = self.masked_logprobs([ids for _, ids, _ in rows], [p for _, _, p in rows])
        totals = [0.0] * len(encoded)
        greedy = [True] * len(encoded)
        for (k, _, _), lp, hit in zip(rows, lps, hits, strict=True):
            totals[k] += lp
            greedy[k] = greedy[k] and hit
        return [Score(t, g, len(e[1])) for t, g, e in zip(totals, greedy, encoded, strict=True)]

    def masked_logprobs(self, texts: list[list[int]], positions: list[int]) -> tuple[list[float], list[bool]]:
        """For each (text, position): log p(original token | text with it masked), and whether it is the argmax."""
        model = self.loaded.model
        longest = max(len(t) for t in texts)
        budget = activations.tokens_per_forward(model.config, longest)
        plan = activations.plan_batches([len(t) for t in texts], MAX_ROWS, budget)
        lps, hits = [0.0] * len(texts), [False] * len(texts)
        pad = int(getattr(self.loaded.tokenizer, "pad_token_id", None) or 0)
        for batch in plan:
            cancel.check()
            width = max(len(texts[i]) for i in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)  # (B, T) right-padded
            attn = torch.zeros_like(ids)
            for r, i in enumerate(batch):
                ids[r, :len(texts[i])] = torch.tensor(texts[i])
                attn[r, :len(texts[i])] = 1
            at = torch.tensor([positions[i] for i in batch])
            originals = ids[torch.arange(len(batch)), at].clone()  # (B,)
            ids[torch.arange(len(batch)), at] = self.mask_id
            self._fill(ids, attn, at, originals, batch, lps, hits)
        return lps, hits

    def _fill(self, ids: torch.Tensor, attn: torch.Tensor, at: torch.Tensor, originals: torch.Tensor,
              batch: list[int], lps: list[float], hits: list[bool]) -> None:
        model = self.loaded.model
        device = input_device(model)
        kwargs: dict[str, torch.Tensor] = {"input_ids": ids.to(device), "attention_mask": attn.to(device)}
        with torch.inference_mode():
            logits = model(**kwargs).logits  # (B, T, V)
            rows = logits[torch.arange(len(batch), device=logits.device), at.to(logits.device)]  # (B, V)
            lp = torch.log_softmax(rows.float(), dim=-1).cpu()
        for r, i in enumerate(batch):
            lps[i] = float(lp[r, originals[r]])
            hits[i] = int(lp[r].argmax()) == int(originals[r])
