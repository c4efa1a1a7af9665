"""Every choice of an example in ONE sequence: the choices branch off the context, and a mask keeps them apart.

An example's sequence is its context followed by each choice's tokens but the last (the last token is only
predicted), choice after choice. Positions restart after the context for every choice (each choice reads as if it
came right after the context), and a (T, T) mask lets a context token see the context tokens before it and a choice
token see the whole context and the tokens of its own choice before it, nothing of the other choices. So one
forward of the model gives, at the context's last position, the prediction of every choice's first token, and at
each choice token the prediction of that choice's next one: the numbers of running ``context + choice`` for each
choice apart, the context computed once. Several examples go in one forward (right-padded), each with its mask.

lm-eval needs a forward row per (context, choice) pair; here a forward row per example, so at the same batch size
(sequences per forward) the model runs a quarter as many rows for four choices, each of them shorter than four
of lm-eval's rows together. Masks are passed to the model ready-made (4-D: transformers uses a custom mask as it is),
so a sliding-window layer is not restricted by its window: :func:`fits` refuses sequences longer than the model's
window, and the caller checks this path against the KV-cache one once per model.

>>> seq = branch([5, 6, 7], [[8], [9, 10, 11], [12, 13]])
>>> seq.ids, seq.positions, seq.segments
([5, 6, 7, 9, 10, 12], [0, 1, 2, 3, 4, 3], [0, 0, 0, 2, 2, 3])
>>> allowed(seq.segments)[4].tolist()  # choice 2's second token sees the context and choice 2's first token
[True, True, True, True, True, False]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from explorer.evaluation.score import Score

__all__ = ["Branched", "allowed", "branch", "fits", "score_batch"]

WINDOW_FIELDS = ("sliding_window", "window_size", "attention_window")  # configs' local-attention spans


@dataclass(frozen=True)
class Branched:
    """One example as one sequence: its tokens, their positions, and whose each is (0: the context, k: choice k)."""

    ids: list[int]
    positions: list[int]
    segments: list[int]
    context: int  # the context's length
    choices: list[list[int]]


def branch(context: Sequence[int], choices: Sequence[Sequence[int]]) -> Branched:
    """The context then every choice's tokens but its last, positions restarting after the context."""
    ids, positions, segments = list(context), list(range(len(context))), [0] * len(context)
    for k, choice in enumerate(choices, start=1):
        body = list(choice[:-1])
        ids += body
        positions += range(len(context), len(context) + len(body))
        segments += [k] * len(body)
    return Branched(ids, positions, segments, len(context), [list(c) for c in choices])


def allowed(segments: Sequence[int]) -> torch.Tensor:
    """(T, T) bool: query i may read key j when j <= i and j is the context's or i's own choice's."""
    seg = torch.tensor(list(segments))
    t = torch.arange(len(seg))
    return (t[None, :] <= t[:, None]) & ((seg[None, :] == 0) | (seg[None, :] == seg[:, None]))


def fits(config: object, length: int) -> bool:
    """Whether a sequence of ``length`` tokens stays within every local-attention window the config declares."""
    for name in WINDOW_FIELDS:
        window = getattr(config, name, None)
        if isinstance(window, int) and 0 < window < length:
            return False
    return True


def _inputs(seqs: list[Branched], pad: int, float_mask: bool,
            dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """input_ids (B, T), position_ids (B, T) and the 4-D mask (B, 1, T, T), right-padded."""
    width = max(len(s.ids) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    positions = torch.zeros((len(seqs), width), dtype=torch.long)
    mask = torch.eye(width, dtype=torch.bool).repeat(len(seqs), 1, 1)  # a padded row reads itself: no empty softmax
    for b, s in enumerate(seqs):
        n = len(s.ids)
        ids[b, :n], positions[b, :n] = torch.tensor(s.ids), torch.tensor(s.positions)
        mask[b, :n, :n] = allowed(s.segments)
    if float_mask:  # eager attention adds the mask to its scores
        return ids, positions, torch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, torch.finfo(dtype).min)[:, None]
    return ids, positions, mask[:, None]


def _kept(seqs: list[Branched], width: int) -> tuple[torch.Tensor, list[int]]:
    """(B, T) bool of the positions whose prediction is scored, and each sequence's count of them."""
    keep = torch.zeros((len(seqs), width), dtype=torch.bool)
    counts = []
    for b, s in enumerate(seqs):
        keep[b, s.context - 1] = True
        keep[b, s.context:len(s.ids)] = True
        counts.append(1 + len(s.ids) - s.context)
    return keep, counts


def score_batch(model: torch.nn.Module, seqs: list[Branched], pad: int,
                device: torch.device | str) -> list[list[Score]]:
    """Every choice of every sequence scored from one forward (logits only at the scored positions)."""
    config = getattr(model, "config", None)
    eager = getattr(config, "_attn_implementation", "sdpa") == "eager"
    dtype = next(model.parameters()).dtype
    ids, positions, mask = _inputs(seqs, pad, eager, dtype)
    keep, counts = _kept(seqs, ids.shape[1])
    with torch.inference_mode():
        logits = model(input_ids=ids.to(device), position_ids=positions.to(device), attention_mask=mask.to(device),
                       logits_to_keep=keep.to(device)).logits  # (N, V) in (b, position) order
        lp = torch.log_softmax(logits.float(), dim=-1)
        best = lp.argmax(-1).cpu()
    out, at = [], 0
    for s, n in zip(seqs, counts, strict=True):
        rows, top = lp[at:at + n], best[at:at + n]  # row 0: after the context; row 1 + i: after body token i
        out.append(_choices(s, rows, top))
        at += n
    return out


def _choices(s: Branched, rows: torch.Tensor, top: torch.Tensor) -> list[Score]:
    scores, at = [], 1
    for choice in s.choices:
        # the first token is predicted after the context; token j + 1 after the choice's own token j
        steps = [0, *range(at, at + len(choice) - 1)]
        picked = [float(rows[r, t]) for r, t in zip(steps, choice, strict=True)]
        greedy = all(int(top[r]) == t for r, t in zip(steps, choice, strict=True))
        scores.append(Score(sum(picked), greedy, len(choice)))
        at += len(choice) - 1
    return scores
