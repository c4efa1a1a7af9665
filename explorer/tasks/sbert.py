"""Sentence-BERT's two design choices, computed on a real encoder (Reimers & Gurevych 2019, Sec. 3).

**Pooling**: how the token vectors of the last layer become one sentence vector. CLS takes the first token's
output; MEAN averages the real tokens' outputs (the default, and what all-MiniLM-L6-v2 was trained with); MAX takes,
per dimension, the largest value over the real tokens. :func:`pooling_study` embeds the bundled graded pairs each
way and measures how well each pooling's cosine similarities rank the pairs as a person graded them (Spearman).
The paper's own pooling ablation (its Table 6) is not shown: no readable copy of it was found.

**Training objectives**, each computed from the sentence vectors u and v of the encoder:

- classification (NLI): ``o = softmax(W [u; v; |u - v|])`` over 3 labels, cross-entropy against the label. W is
  learnt with the encoder; the bundled checkpoint ships without it, so a seeded untrained W shows the computation
  (its probabilities are arbitrary), not a trained classifier;
- regression (STS): the cosine of u and v against a gold similarity scaled to [0, 1], mean squared error;
- triplet: ``max(||a - p|| - ||a - n|| + 1, 0)`` with Euclidean distances: the anchor must be closer to the
  positive than to the negative by a margin of 1.

>>> import torch
>>> h = torch.tensor([[[1.0, 0.0], [3.0, 4.0], [9.0, 9.0]]])  # (B=1, T=3, D=2); the last token is padding
>>> m = torch.tensor([[1, 1, 0]])
>>> [pool(h, m, p, normalize=False).tolist() for p in POOLINGS]
[[[1.0, 0.0]], [[2.0, 2.0]], [[3.0, 4.0]]]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from explorer.compression import quality
from explorer.core.correlation import spearman
from explorer.core.errors import ExplorerError
from explorer.core.limits import SBERT_SENTENCE_CHARS
from explorer.core.locks import lock_of
from explorer.core.userinput import require_text
from explorer.runtime import cancel
from explorer.runtime.offload import input_device
from explorer.tasks import similarity

if TYPE_CHECKING:
    from explorer.runtime.loading import LoadedModel

__all__ = ["LABELS", "MARGIN", "POOLINGS", "Objectives", "PoolingRow", "objectives", "pool", "pooling_study",
           "token_states"]

POOLINGS = ("cls", "mean", "max")
LABELS = ("contradiction", "entailment", "neutral")  # the order of SBERT's NLI classifier
MARGIN = 1.0  # the triplet objective's epsilon (Sec. 3)


def token_states(loaded: LoadedModel, sentences: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """The last layer's token vectors (B, T, D) and the real-token mask (B, T) of ``sentences``."""
    tok = loaded.tokenizer
    with lock_of(tok):
        batch = tok(sentences, padding=True, truncation=True, max_length=similarity.max_length(loaded),
                    return_tensors="pt")
    device = input_device(loaded.model)
    inputs = {k: v.to(device) for k, v in batch.items()}
    with torch.inference_mode():
        hidden = loaded.model(**inputs).last_hidden_state
    return hidden.float().cpu(), inputs["attention_mask"].cpu()


def pool(hidden: torch.Tensor, mask: torch.Tensor, how: str, normalize: bool = True) -> torch.Tensor:
    """One vector per sentence (B, D) from its token vectors (B, T, D): ``how`` is "cls", "mean" or "max"."""
    if how == "cls":
        out = hidden[:, 0]
    elif how == "mean":  # normalised, this is similarity.mean_pool: the bi-encoder's own embedding
        out = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
    elif how == "max":
        out = hidden.masked_fill(mask[..., None] == 0, float("-inf")).amax(1)
    else:
        raise ExplorerError(f"Unknown pooling {how!r}: choose one of {', '.join(POOLINGS)}.")
    return F.normalize(out, dim=-1) if normalize else out


@dataclass(frozen=True)
class PoolingRow:
    """One pooling's cosine similarities of the graded pairs and their rank agreement with the grades."""

    pooling: str
    spearman: float  # x 100, as STS papers report it
    cosines: tuple[float, ...]  # one per pair


def pooling_study(loaded: LoadedModel) -> list[PoolingRow]:
    """Every pooling on the bundled graded pairs (``assets/compression/sentence_pairs.tsv``)."""
    pairs, grades = quality.sentence_pairs(), list(quality.pair_grades())
    firsts, seconds = [a for a, _ in pairs], [b for _, b in pairs]
    states = [token_states(loaded, part) for part in (firsts, seconds)]
    rows = []
    for how in POOLINGS:
        cancel.check()
        u, v = (pool(h, m, how) for h, m in states)
        cos = (u * v).sum(-1).tolist()
        rows.append(PoolingRow(how, round(100 * spearman(cos, grades), 2), tuple(round(c, 4) for c in cos)))
    return rows


@dataclass(frozen=True)
class Objectives:
    """What each Sentence-BERT objective computes on the typed sentences (mean pooling, as trained)."""

    cosine: float  # cos(u, v) of anchor and positive
    probabilities: tuple[float, ...]  # the untrained classifier's softmax over LABELS
    classification_loss: float  # -log p(label)
    label: str
    gold: float  # the regression target, 0-5
    regression_loss: float  # (cos - gold / 5)^2
    distance_positive: float
    distance_negative: float
    triplet_loss: float


def _sentence(text: object, what: str) -> str:
    return require_text(text, what=what, empty_hint="type a sentence.", max_chars=SBERT_SENTENCE_CHARS,
                        limit_note="one sentence is enough")


def objectives(loaded: LoadedModel, anchor: str, positive: str, negative: str, label: str = "entailment",
               gold: float = 4.0, seed: int = 0) -> Objectives:
    """The three losses on real embeddings of a typed anchor, positive and negative sentence."""
    texts = [_sentence(anchor, "anchor"), _sentence(positive, "positive"), _sentence(negative, "negative")]
    if label not in LABELS:
        raise ExplorerError(f"Unknown label {label!r}: choose one of {', '.join(LABELS)}.")
    if not isinstance(gold, int | float) or not 0 <= gold <= 5:
        raise ExplorerError(f"The gold similarity must be a number from 0 to 5 (got {gold!r}).")
    hidden, mask = token_states(loaded, texts)
    raw = pool(hidden, mask, "mean", normalize=False)  # (3, D)
    u, v, n = raw
    features = torch.cat([u, v, (u - v).abs()])  # (3D,)
    weight = torch.randn((len(LABELS), features.numel()), generator=torch.Generator().manual_seed(seed))
    weight = weight / math.sqrt(features.numel())  # an untrained classifier's scale (Xavier-like)
    probs = torch.softmax(weight @ features, -1)
    cosine = float(F.cosine_similarity(u, v, dim=0))
    dp, dn = float((u - v).norm()), float((u - n).norm())
    return Objectives(round(cosine, 4), tuple(round(float(p), 4) for p in probs),
                      round(float(-torch.log(probs[LABELS.index(label)])), 4), label, float(gold),
                      round((cosine - gold / 5) ** 2, 4), round(dp, 4), round(dn, 4),
                      round(max(dp - dn + MARGIN, 0.0), 4))
