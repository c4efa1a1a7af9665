"""Late interaction: MaxSim scores, a ranking next to the bi-encoder's, and rank statistics.

ColBERT keeps one vector per token instead of one per sentence. A query scores a document by
MaxSim: every query token takes its best-matching document token (cosine), and the matches are
summed. The ranking is shown next to the bi-encoder's (one mean-pooled vector per sentence), with
Kendall's tau-b saying how much the two orders agree.

>>> import torch
>>> q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # (Tq, D) unit rows
>>> docs = [torch.tensor([[1.0, 0.0]]), torch.tensor([[0.6, 0.8], [0.0, 1.0]])]
>>> maxsim_scores(q, docs).tolist()  # doc 0: 1 + 0; doc 1: 0.6 + 1
[1.0, 1.600000023841858]
>>> ranks([1.0, 1.6]), kendall_tau([1, 2, 3], [3, 2, 1])
([2, 1], -1.0)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice, texts
from explorer.runtime.placement import ran_on
from explorer.tasks import similarity
from explorer.tasks.colbert.encoder import (
    STAND_IN_NOTE,
    TokenEmbeddings,
    TokenEncoder,
    encode_collection,
    encode_tokens,
    truncation_notices,
)

if TYPE_CHECKING:  # typing only: no runtime import of the loader
    from explorer.runtime.loading import LoadedModel

__all__ = [
    "MaxSim", "RankedDoc", "Ranking", "kendall_tau", "maxsim", "maxsim_scores", "maxsim_texts", "rank", "ranks",
    "top_k_overlap",
]


@dataclass(frozen=True)
class MaxSim:
    """Late interaction of one query with one document."""

    query_tokens: tuple[str, ...]
    doc_tokens: tuple[str, ...]
    matrix: tuple[tuple[float, ...], ...]  # (Tq, Td) cosine of every token pair
    best: tuple[int, ...]  # (Tq,) index of each query token's best document token
    best_sim: tuple[float, ...]  # (Tq,) its cosine: the query token's contribution
    score: float  # sum of best_sim

    def to_dict(self) -> dict[str, object]:
        return {"query_tokens": list(self.query_tokens), "doc_tokens": list(self.doc_tokens),
                "matrix": [list(r) for r in self.matrix], "best": list(self.best),
                "best_sim": list(self.best_sim), "score": self.score}


def maxsim_scores(q: torch.Tensor, docs: list[torch.Tensor]) -> torch.Tensor:
    """MaxSim score of one query against many documents: q (Tq, D), docs [(Td_i, D)] -> (N,)."""
    return torch.stack([(q @ d.T).max(dim=1).values.sum() for d in docs])


def maxsim(q: TokenEmbeddings, d: TokenEmbeddings) -> MaxSim:
    """The full token x token matrix, each query token's best match, and the summed score."""
    sim = q.vectors @ d.vectors.T  # (Tq, Td)
    best_sim, best = sim.max(dim=1)  # (Tq,), (Tq,)
    rows = tuple(tuple(round(float(v), 5) for v in r) for r in sim.tolist())
    return MaxSim(q.tokens, d.tokens, rows, tuple(int(i) for i in best.tolist()),
                  tuple(round(float(v), 5) for v in best_sim.tolist()), round(float(best_sim.sum()), 5))


def maxsim_texts(enc: TokenEncoder, query: str, doc: str) -> MaxSim:
    """MaxSim of a query text against one document text, both encoded with ``enc``."""
    return maxsim(encode_tokens(enc, query, "query"), encode_tokens(enc, doc, "document"))


def ranks(scores: torch.Tensor | np.ndarray | list[float]) -> list[int]:
    """Rank of each item (1 = highest score; ties keep input order)."""
    s = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-s, kind="stable")
    out = np.empty(len(s), dtype=np.int64)
    out[order] = np.arange(1, len(s) + 1)
    return out.tolist()


def kendall_tau(a: list[float] | np.ndarray, b: list[float] | np.ndarray) -> float:
    """Kendall's tau-b between two score lists (1 = same order, -1 = reversed); handles ties.

    O(n^2) on purpose: the page ranks at most a few hundred documents, and no scipy dependency.
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(x) != len(y):
        raise ExplorerError("Kendall tau needs two score lists of the same length.")
    if len(x) < 2:
        return 1.0
    i, j = np.triu_indices(len(x), k=1)
    dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    concordant_minus_discordant = float((dx * dy).sum())
    pairs_x, pairs_y = float(np.count_nonzero(dx)), float(np.count_nonzero(dy))
    if pairs_x == 0 or pairs_y == 0:  # one list is all ties: order is undefined
        return 1.0 if pairs_x == pairs_y else 0.0
    return concordant_minus_discordant / math.sqrt(pairs_x * pairs_y)


def top_k_overlap(a: list[float] | np.ndarray, b: list[float] | np.ndarray, k: int) -> float:
    """Fraction of the top-k items (by score) that both lists share (1 = same top-k set)."""
    k = max(1, min(k, len(a)))
    top_a = set(np.argsort(-np.asarray(a), kind="stable")[:k].tolist())
    top_b = set(np.argsort(-np.asarray(b), kind="stable")[:k].tolist())
    return len(top_a & top_b) / k


@dataclass(frozen=True)
class RankedDoc:
    index: int  # position in the user's list
    text: str
    colbert_score: float
    colbert_rank: int
    bi_score: float  # bi-encoder cosine (one vector per sentence)
    bi_rank: int


@dataclass(frozen=True)
class Ranking:
    """A query ranked against documents by late interaction, next to the bi-encoder's ranking."""

    query: str
    encoder: str  # label: ColBERT checkpoint or stand-in
    stand_in: bool
    untrained: bool
    docs: tuple[RankedDoc, ...]  # best ColBERT score first
    kendall_tau: float  # agreement of the two rankings
    notices: tuple[Notice, ...] = ()  # dropped lines, texts cut at the token limits, the stand-in
    device: str = "cpu"  # what ran the token encoder (the bi-encoder shares the placement)
    device_name: str = "cpu"
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "docs": [asdict(d) for d in self.docs], "notices": texts(self.notices)}


def rank(enc: TokenEncoder, bi_loaded: LoadedModel, query: str, lines: list[str] | str) -> Ranking:
    """Rank documents by MaxSim and by bi-encoder cosine; both scores and ranks per document."""
    clean = similarity.clean_sentences(lines)
    q, docs = encode_collection(enc, query, clean.sentences)
    late = maxsim_scores(q.vectors, [d.vectors for d in docs]).tolist()  # (N,)
    emb = similarity.encode(bi_loaded, [q.text, *clean.sentences])  # (1 + N, D)
    bi = similarity.cosine_matrix(emb[:1], emb[1:])[0].tolist()  # (N,)
    late_rank, bi_rank = ranks(late), ranks(bi)
    rows = sorted((RankedDoc(i, t, round(late[i], 5), late_rank[i], round(bi[i], 5), bi_rank[i])
                   for i, t in enumerate(clean.sentences)), key=lambda r: r.colbert_rank)
    untrained = bool(getattr(enc.loaded, "untrained", False) or getattr(bi_loaded, "untrained", False))
    notices = clean.notices + truncation_notices(enc, q.text, clean.sentences) + (
        (Notice("stand-in", STAND_IN_NOTE),) if enc.stand_in else ())
    return Ranking(q.text, enc.label, enc.stand_in, untrained, tuple(rows),
                   round(kendall_tau(late, bi), 5), notices, **ran_on(enc.loaded))
