"""Whole-text log-probabilities of many continuations of one prefix, the prefix computed once.

The log-probability of a text under a decoder is the sum over its tokens of
``log p(token | tokens before it)``. To rank C candidates for a blank, the naive way runs C
full texts. Here the prefix (the text before the blank) runs once; its KV cache is copied to a
batch of C rows and only ``candidate + suffix`` tokens are fed, all but the last (which is only
predicted), right-padded: in a causal model a padded tail cannot change the positions before it,
so no attention mask is needed.

transformers 5 caches are mutated by every forward (layers re-bind ``keys``/``values``, sliding
layers also count ``cumulative_length``), so every batch gets a deep copy of the prefix cache,
expanded with ``batch_repeat_interleave``; the stored prefix cache is never fed to the model.

The lm_head is half the cost (Gemma 3's vocabulary has 262,144 tokens; its 671 MB weight is read
once per forward): only positions that predict a real token go through it (``logits_to_keep`` as
a boolean mask, so padding gets no logits), and as many candidate rows share one forward as
``FORWARD_BYTES`` allows (50 candidates on a short prompt: one forward instead of four).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from explorer.runtime import cancel
from explorer.runtime.offload import input_device
from explorer.tasks.generation.nexttoken import takes_logits_to_keep

__all__ = ["FORWARD_BYTES", "Continuation", "PrefixScorer", "beam_continuations", "naive_scores", "sequence_logprob"]

# memory for one forward's copied prefix cache and logits: candidate rows are packed up to it (73 rows of
# 3 scored positions on Gemma 3 after a 27-token prefix; 20 after 781 tokens, whose cache is 20 MB a row)
FORWARD_BYTES = 512 * 2**20
ANYTIME_FIRST = 8  # candidates in an anytime scoring's first forward (then as many as fit FORWARD_BYTES)


@dataclass(frozen=True)
class Continuation:
    """Token ids put in the blank and the whole text's log-probability with them."""

    ids: tuple[int, ...]
    logprob: float  # sum of log p over every predicted token of prefix + ids + suffix (<= 0)
    left: float = 0.0  # log p(ids | prefix): the left context's own score of the answer


def _logprobs(logits: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits.to(torch.float32), dim=-1)  # (B, T, V)


def _target_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log p(target) per row of ``logits`` (N, V) -> (N,); uses the logits up (overwritten in place).

    logit - logsumexp, the logsumexp by hand: ``torch.logsumexp`` would allocate a second (N, V)
    tensor for ``logits - max`` (157 MB for 50 candidates x 3 positions on Gemma 3).
    """
    logits = logits.to(torch.float32)  # no copy when the model computes in float32
    picked = logits.gather(1, targets[:, None])[:, 0]  # (N,) read before the logits are overwritten
    top = logits.amax(1, keepdim=True)  # (N, 1)
    return picked - top[:, 0] - logits.sub_(top).exp_().sum(1).log_()  # (N,)


def sequence_logprob(model: torch.nn.Module, ids: Sequence[int]) -> float:
    """log p(ids[1:] | ids[0]) in one forward: the reference the cached path must equal."""
    x = torch.tensor([list(ids)], device=input_device(model))  # (1, T)
    with torch.inference_mode():
        lp = _logprobs(model(input_ids=x).logits)[0, :-1]  # (T-1, V): position t predicts t+1
    return float(lp.gather(1, x[0, 1:, None]).sum())


def naive_scores(model: torch.nn.Module, prefix: Sequence[int], middles: Sequence[Sequence[int]],
                 suffix: Sequence[int]) -> list[float]:
    """Whole-text log-probability per candidate, each text run from scratch (the slow baseline)."""
    return [sequence_logprob(model, [*prefix, *m, *suffix]) for m in middles]


def _cache_bytes(cache: Any) -> int:
    """Bytes of the keys and values held by a transformers 5 cache (0 for a cache laid out otherwise)."""
    tensors = (getattr(layer, name, None) for layer in getattr(cache, "layers", ()) for name in ("keys", "values"))
    return sum(t.nbytes for t in tensors if isinstance(t, torch.Tensor))


class PrefixScorer:
    """Runs ``prefix`` once; scores any ``middle + suffix`` after it from the shared KV cache."""

    def __init__(self, model: torch.nn.Module, prefix: Sequence[int]) -> None:
        if len(prefix) < 1:
            raise ValueError("the prefix needs at least one token (the tokenizer's <bos>)")
        self.model, self.prefix = model, tuple(int(i) for i in prefix)
        self._keeps = takes_logits_to_keep(model)  # else every position goes through the output layer
        x = torch.tensor([self.prefix], device=input_device(model))  # (1, P)
        with torch.inference_mode():
            out = model(input_ids=x, use_cache=True)
        # log_softmax as in sequence_logprob: the constant prefix term stays the reference's to the last digits
        lp = _logprobs(out.logits)[0]  # (P, V)
        self.prefix_logprob = float(lp[:-1].gather(1, x[0, 1:, None]).sum())
        self.next_logprobs = lp[-1].cpu()  # (V,) the left-context distribution at the blank
        self._cache = out.past_key_values
        self.stopped: cancel.RequestStopped | None = None  # why an anytime scores() stopped early
        self.planned_stop = False  # an anytime scoring or beam ended early to leave its reserve of time for later work
        self.beam_depth = 0  # answer lengths a beam tried (beam_continuations): fewer than asked when it ended early
        self._cache_bytes = _cache_bytes(self._cache)  # one row's copy of it, in every forward

    def _expanded_cache(self, rows: int) -> Any:
        cache = copy.deepcopy(self._cache)  # forwards re-bind the layers' tensors: never touch the original
        cache.batch_repeat_interleave(rows)
        return cache

    def _rows_per_forward(self, positions: int) -> int:
        """Candidate rows that fit ``FORWARD_BYTES`` when each row projects ``positions`` positions."""
        vocab = self.next_logprobs.shape[0]
        # float32 logits, twice: room for the head's temporaries (a final softcapping, a float32 copy of bf16)
        per_row = self._cache_bytes + 2 * max(positions, 1) * vocab * 4
        return max(1, FORWARD_BYTES // per_row)

    def _logits_at(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """Logits at the ``keep`` (B, W) positions of ``x`` (B, W) fed after the prefix, row by row: (N, V)."""
        cache = self._expanded_cache(x.shape[0])
        if not self._keeps:
            return self.model(input_ids=x, past_key_values=cache).logits[keep]
        # the model drops the other positions before its lm_head (and before any final softcapping)
        return self.model(input_ids=x, past_key_values=cache, logits_to_keep=keep).logits

    def _score_batch(self, tails: list[tuple[int, ...]]) -> list[float]:
        first = self.next_logprobs[torch.tensor([t[0] for t in tails])]  # (B,) predicted by the prefix
        # a tail's last token is only predicted, never fed: its hidden state would be read by nothing
        width, pad = max(len(t) for t in tails) - 1, self.prefix[0]
        if width == 0:
            return (self.prefix_logprob + first).tolist()
        x = torch.tensor([[*t[:-1], *[pad] * (width + 1 - len(t))] for t in tails],
                         device=input_device(self.model))  # (B, W) right-padded
        real = torch.tensor([[w + 1 < len(t) for w in range(width)] for t in tails], device=x.device)  # (B, W)
        targets = torch.tensor([t[w + 1] for t in tails for w in range(len(t) - 1)], device=x.device)  # (N,)
        with torch.inference_mode():
            logits = self._logits_at(x, real)  # (N, V): position w of a row predicts its token w+1
            lp = _target_logprobs(logits, targets).cpu()  # (N,)
        rest = torch.zeros(len(tails), width)  # (B, W) zero on padding
        rest[real.cpu()] = lp
        return (self.prefix_logprob + first + rest.sum(1)).tolist()

    def scores(self, middles: Sequence[Sequence[int]], suffix: Sequence[int], *,
               anytime: bool = False, reserve: float | None = None) -> list[float]:
        """Whole-text log-probability of ``prefix + middle + suffix`` for every middle.

        ``anytime``: when the request's budget runs out after some batches, return the scores so far (fewer than
        the middles, in their order) and keep the reason in :attr:`stopped`, instead of raising (a closed tab
        still raises: nobody waits for the rest). With ``reserve`` (seconds kept for the work after this one), a
        batch that would not end before that reserve is not started (:func:`explorer.runtime.cancel.room_for`,
        its cost from the batches before): :attr:`planned_stop` says so."""
        tails = [tuple(int(i) for i in (*m, *suffix)) for m in middles]
        if any(not t for t in tails):
            raise ValueError("every candidate needs at least one token after the prefix")
        out: list[float] = []
        if not tails:
            return out
        rows = self._rows_per_forward(max(len(t) for t in tails) - 1)
        # in anytime mode the first forward is smaller, so something is ranked even when little time is left
        starts = [0, *range(min(rows, ANYTIME_FIRST) if anytime else rows, len(tails), rows)]
        per_row = 0.0  # seconds one candidate row took so far
        for start, stop in zip(starts, [*starts[1:], len(tails)], strict=True):
            if anytime and out and reserve is not None and not cancel.room_for(per_row * (stop - start), reserve):
                self.planned_stop = True
                break
            try:
                cancel.check()  # a stopped request frees its worker between candidate batches
            except cancel.RequestStopped as err:
                if not anytime or err.reason == "gone" or not out:
                    raise
                self.stopped = err
                break
            began = cancel.now()
            out.extend(self._score_batch(tails[start:stop]))
            per_row = max(per_row, (cancel.now() - began) / (stop - start))
        return out

    def next_after(self, middles: Sequence[Sequence[int]]) -> torch.Tensor:
        """Left-context log-probabilities of the token after ``prefix + middle``, per middle: (M, V)."""
        rows = [self.next_logprobs if not m else None for m in middles]
        todo = [i for i, m in enumerate(middles) if m]
        step = self._rows_per_forward(1)
        for start in range(0, len(todo), step):
            cancel.check()
            part = todo[start:start + step]
            width = max(len(middles[i]) for i in part)
            x = torch.tensor([[*middles[i], *[self.prefix[0]] * (width - len(middles[i]))] for i in part],
                             device=input_device(self.model))  # (B, W) right-padded
            last = torch.zeros_like(x, dtype=torch.bool)  # (B, W): only each middle's last token is projected
            last[torch.arange(len(part)), torch.tensor([len(middles[i]) - 1 for i in part])] = True
            with torch.inference_mode():
                lp = _logprobs(self._logits_at(x, last)).cpu()  # (B, V)
            for row, i in enumerate(part):
                rows[i] = lp[row]  # (V,)
        done = [r for r in rows if r is not None]
        assert len(done) == len(rows)  # every non-empty middle got its row above
        return torch.stack(done)  # (M, V)


def beam_continuations(scorer: PrefixScorer, suffix: Sequence[int], *, max_tokens: int, width: int,
                       expand: int, banned: frozenset[int] = frozenset(), anytime: bool = False,
                       reserve: float | None = None) -> list[Continuation]:
    """Answers of 1..``max_tokens`` tokens for one blank, best whole-text log-probability first.

    A beam search over the left context: each step extends the ``width`` partial answers most
    likely after the text before the blank by their ``expand`` most likely next tokens; every
    extension is also scored with the whole text (the suffix included) and kept as a candidate.
    Partial answers are kept by the left context, not the whole text: " " + "." is a poor sentence
    but the start of " 1879." (Gemma spells numbers digit by digit), so a number or a name of
    several tokens is found without trying the vocabulary squared.

    ``anytime`` (with ``reserve``, as :meth:`PrefixScorer.scores`): the answers found so far when the request's time
    runs out, or before a step that would not end before the reserve; :attr:`PrefixScorer.beam_depth` says how long
    the answers tried were.
    """
    beams: list[tuple[int, ...]] = [()]
    left: dict[tuple[int, ...], float] = {(): 0.0}  # log p(partial answer | text before the blank)
    found: dict[tuple[int, ...], float] = {}
    step_seconds = 0.0
    for depth in range(1, max_tokens + 1):
        if anytime and found and reserve is not None and not cancel.room_for(step_seconds, reserve):
            scorer.planned_stop = True
            break
        began = cancel.now()
        try:
            grown = _grow(scorer, beams, left, found, expand, banned)
            if not grown:
                break
            scored = scorer.scores(grown, suffix, anytime=anytime, reserve=reserve)
        except cancel.RequestStopped as err:
            if not anytime or err.reason == "gone" or not found:
                raise
            scorer.stopped = err
            break
        found.update(zip(grown, scored, strict=False))  # the most likely first: an anytime scoring keeps those
        scorer.beam_depth = depth
        if len(scored) < len(grown):
            break
        beams = grown[:width]
        # the next step extends up to width partial answers by expand tokens each: as many rows as that, longer
        step_seconds = (cancel.now() - began) * max(1.0, width * expand / len(grown))
    return [Continuation(ids, found[ids], left[ids]) for ids in sorted(found, key=lambda g: -found[g])]


def _grow(scorer: PrefixScorer, beams: list[tuple[int, ...]], left: dict[tuple[int, ...], float],
          found: dict[tuple[int, ...], float], expand: int, banned: frozenset[int]) -> list[tuple[int, ...]]:
    """Each beam extended by its ``expand`` most likely next tokens (``left`` gets their left-context
    log-probabilities): the new partial answers, most likely first."""
    nxt = scorer.next_after(beams)  # (B, V)
    if banned:
        nxt[:, sorted(banned)] = float("-inf")
    for m, row in zip(beams, nxt, strict=True):
        top = row.topk(min(expand, row.shape[0]))
        left.update({(*m, int(t)): left[m] + float(v) for v, t in zip(top.values, top.indices, strict=True)})
    grown = [g for g in left if len(g) == len(beams[0]) + 1 and g not in found]
    return sorted(grown, key=lambda g: -left[g])
