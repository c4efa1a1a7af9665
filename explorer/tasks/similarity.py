"""Bi-encoder sentence similarity (Sentence-BERT): mean pooling, normalised embeddings, cosine matrix, search.

The recipe is the one ``sentence_transformers`` runs for all-MiniLM-L6-v2 (Transformer -> mean Pooling ->
Normalize), reimplemented on the plain ``transformers`` model so the app can show each step and so the
embeddings equal ``SentenceTransformer.encode`` (tested: max abs difference < 1e-5). Speed matters because
users paste lists: sentences are tokenized once, sorted by token count (batches pad less) and run under
``torch.inference_mode``.

>>> clean = clean_sentences(["A cat sits.", "", "A  cat sits.", "A dog runs."])
>>> clean.sentences
('A cat sits.', 'A dog runs.')
>>> [(n.kind, n.text) for n in clean.notices]
[('dropped', "Dropped a duplicate of line 1: 'A cat sits.'."), ('dropped', 'Ignored 1 empty line(s).')]
>>> import torch
>>> mean_pool(torch.tensor([[[3.0, 4.0], [9.0, 9.0]]]), torch.tensor([[1, 0]]))  # (B, T, D), (B, T) -> (B, D)
tensor([[0.6000, 0.8000]])
"""

from __future__ import annotations

import json
import time
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from explorer.architecture.modeltypes import is_encoder_decoder
from explorer.core.errors import ExplorerError
from explorer.core.limits import SIMILARITY_LIST_CHARS
from explorer.core.notices import Notice, texts
from explorer.runtime import activations, cancel
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on
from explorer.tasks import packedencoder

if TYPE_CHECKING:  # typing only: no runtime import of the loader
    from explorer.runtime.loading import LoadedModel

__all__ = [
    "BI_ENCODER", "BUSY_CPU_SECONDS_PER_SENTENCE", "MAX_SENTENCES", "SearchHit", "SearchResult", "SentenceList",
    "SimilarityResult", "clean_sentences", "cosine_matrix", "encode", "max_length", "mean_pool", "page_limit", "search",
    "similarity", "tidy", "truncation_notices",
]

BI_ENCODER = "sentence-bert"  # catalog key of the bundled all-MiniLM-L6-v2
MAX_SENTENCES = 200  # the page and the CLI draw an N x N matrix: beyond this it is unreadable and slow
# Seconds one sentence costs the Similarity page's slowest request, ColBERT's compression study (every sentence
# through the encoder one at a time, then k-means over their token vectors), measured with all-MiniLM-L6-v2 on a
# 2-core CPU kept busy by four other CPU-bound processes (on a shared machine whose other work already held its
# load average near 14: a harsher case than four alone), one torch thread (explorer.runtime.threads), 200 sentences
# of ~100 characters (the list's 20,000-character cap spread over 200 lines): 111 s, where the late-interaction
# ranking took 74 s and the bi-encoder's matrix 17 s.
BUSY_CPU_SECONDS_PER_SENTENCE = 111 / 200
PAGE_TIME_SHARE = 0.9  # of a request's time budget the planned work may take: the rest is margin


@dataclass(frozen=True)
class SentenceList:
    """User lines after cleaning: what will be embedded, and what was dropped and why."""

    sentences: tuple[str, ...]
    notices: tuple[Notice, ...]  # "dropped": empty lines and duplicates (they quote user text)

    def to_dict(self) -> dict[str, object]:
        return {"sentences": list(self.sentences), "notices": texts(self.notices)}


@dataclass(frozen=True)
class SimilarityResult:
    """Cosine similarity of every pair of sentences (embeddings are unit vectors, so cosine = dot)."""

    model: str
    sentences: tuple[str, ...]
    matrix: tuple[tuple[float, ...], ...]  # (N, N), symmetric, diagonal 1
    dim: int
    untrained: bool
    notices: tuple[Notice, ...] = ()  # the list's "dropped" notices, then "truncated" ones
    seconds: float = 0.0  # embedding time (the page shows each prediction's latency)
    device: str = "cpu"
    device_name: str = "cpu"  # what ran, e.g. "cuda:0 (NVIDIA H100 80GB HBM3)"
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "sentences": list(self.sentences), "matrix": [list(r) for r in self.matrix],
                "notices": texts(self.notices)}


@dataclass(frozen=True)
class SearchHit:
    rank: int  # 1 = best
    index: int  # position in the searched list
    sentence: str
    score: float  # cosine similarity to the query


@dataclass(frozen=True)
class SearchResult:
    """A query ranked against a list of sentences, best first."""

    model: str
    query: str
    hits: tuple[SearchHit, ...]
    untrained: bool
    seconds: float = 0.0
    device: str = "cpu"
    device_name: str = "cpu"
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "query": self.query, "untrained": self.untrained,
                "seconds": self.seconds, "device": self.device, "device_name": self.device_name,
                "dtype": self.dtype, "hits": [asdict(h) for h in self.hits]}


def tidy(text: str) -> str:
    """One line of user text: control characters dropped (they tokenize to nothing), runs of
    whitespace collapsed to one space. Emoji, right-to-left text and markup are kept as typed."""
    kept = "".join(c for c in str(text) if c.isspace() or unicodedata.category(c) != "Cc")
    return " ".join(kept.split())


def page_limit(budget_seconds: float, accelerator: bool = False) -> int:
    """How many sentences the Similarity page takes: as many as its slowest request embeds within ``budget_seconds``
    (a request's time budget, :func:`explorer.runtime.cancel.request_budget`) on a busy CPU, at most
    :data:`MAX_SENTENCES`. An accelerator gets :data:`MAX_SENTENCES` (its cost was not measured here: no GPU).

    >>> page_limit(60.0), page_limit(45.0), page_limit(30.0, accelerator=True)
    (97, 72, 200)
    """
    if accelerator:
        return MAX_SENTENCES
    return max(1, min(MAX_SENTENCES, int(budget_seconds * PAGE_TIME_SHARE / BUSY_CPU_SECONDS_PER_SENTENCE)))


def clean_sentences(lines: list[str] | str, max_sentences: int = MAX_SENTENCES, why: str = "") -> SentenceList:
    """Strip lines, drop empty ones and exact duplicates (keeping the first), refuse too many or too long.

    Duplicates are dropped because two identical rows add nothing to a similarity matrix and tie
    every ranking; each drop is reported so the user sees why a line vanished. ``why`` says where a
    lower ``max_sentences`` comes from (the page's time budget).
    """
    if isinstance(lines, str):
        if len(lines) > SIMILARITY_LIST_CHARS:
            raise ExplorerError(f"The list is {len(lines):,} characters long; the limit is {SIMILARITY_LIST_CHARS:,}. "
                                "Paste fewer or shorter sentences.")
        lines = lines.splitlines()
    kept: list[str] = []
    notices: list[Notice] = []
    empty = 0
    for line in lines:
        text = tidy(line)
        if not text:
            empty += 1
        elif text in kept:
            notices.append(Notice("dropped", f"Dropped a duplicate of line {kept.index(text) + 1}: {text[:60]!r}."))
        else:
            kept.append(text)
    if empty:
        notices.append(Notice("dropped", f"Ignored {empty} empty line(s)."))
    if not kept:
        raise ExplorerError("No sentences given: type one sentence per line.")
    if len(kept) > max_sentences:
        raise ExplorerError(f"{len(kept)} sentences given; the limit is {max_sentences}{why}. Remove some lines.")
    return SentenceList(tuple(kept), tuple(notices))


def max_length(loaded: LoadedModel) -> int:
    """The token limit the bi-encoder was trained with.

    sentence-transformers reads ``max_seq_length`` from ``sentence_bert_config.json`` (256 for MiniLM,
    below the 512 positions of the backbone); using the same number is what makes long inputs match.
    """
    path = getattr(loaded, "path", None)
    if path and (Path(path) / "sentence_bert_config.json").is_file():
        cfg = json.loads((Path(path) / "sentence_bert_config.json").read_text())
        if cfg.get("max_seq_length"):
            return int(cfg["max_seq_length"])
    limits = [int(loaded.tokenizer.model_max_length),
              int(getattr(loaded.model.config, "max_position_embeddings", 512) or 512), 512]
    return min(limits)


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Average the token vectors of each sentence, ignoring padding, then scale to unit length.

    hidden: (B, T, D) last hidden state; attention_mask: (B, T) of 0/1 -> (B, D) unit vectors.
    """
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (B, T, 1)
    summed = (hidden * mask).sum(dim=1)  # (B, D)
    counts = mask.sum(dim=1).clamp(min=1e-9)  # (B, 1); clamp: an all-padding row must not divide by 0
    return F.normalize(summed / counts, p=2, dim=1)


def _pad_batch(ids: list[list[int]], pad_id: int, with_types: bool, device: str) -> dict[str, torch.Tensor]:
    """Right-pad token id lists to the longest in the batch -> input_ids/attention_mask (B, T)."""
    width = max(len(x) for x in ids)
    input_ids = torch.full((len(ids), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for row, seq in enumerate(ids):
        input_ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[row, : len(seq)] = 1
    batch = {"input_ids": input_ids, "attention_mask": mask}
    if with_types:  # single-segment input: all zeros, as the tokenizer would give
        batch["token_type_ids"] = torch.zeros_like(input_ids)
    return {k: v.to(device) for k, v in batch.items()}


def encode(loaded: LoadedModel, sentences: list[str] | tuple[str, ...], batch_size: int = 32) -> torch.Tensor:
    """Sentence embeddings, in the order given: (N, D) float32 unit vectors on the CPU.

    Tokenizes everything once, then runs batches of at most ``batch_size`` sentences of similar token count
    (longest first, like sentence-transformers, but by tokens rather than characters so each batch
    pads even less), each within the padded tokens whose activations fit one forward
    (:mod:`explorer.runtime.activations`: BERT-base's 512-token texts in batches of 11, not 1,024). Plain BERT encoders
    (MiniLM) run packed, without padding (:mod:`explorer.tasks.packedencoder`); others run ``model(**padded_batch)``.
    Embeddings stay on the model's device until the end: one transfer, not one per batch.
    """
    if not sentences:
        raise ExplorerError("No sentences to embed.")
    tok, model = loaded.tokenizer, loaded.model
    if is_encoder_decoder(model.config):
        raise ExplorerError(f"{_model_label(loaded)} is an encoder-decoder: sentence embeddings need an "
                            "encoder such as sentence-bert (the bundled all-MiniLM-L6-v2).")
    ids = tok(list(sentences), truncation=True, max_length=max_length(loaded),
              add_special_tokens=True)["input_ids"]
    device = input_device(model)
    packed = packedencoder.supports(model)
    out = torch.empty((len(ids), int(model.config.hidden_size)), dtype=torch.float32, device=device)
    # batches of at most batch_size sentences and of the padded tokens whose activations fit one forward
    budget = activations.tokens_per_forward(model.config, max((len(x) for x in ids), default=1),
                                            dtype_bytes=next((p.element_size() for p in model.parameters()), 4))
    batches = activations.plan_batches([len(x) for x in ids], batch_size, budget)  # shortest first
    with torch.inference_mode():
        for rows in reversed(batches):  # longest first, as sentence-transformers
            cancel.check()  # a request stopped by its budget or gone frees its worker between batches
            batch_ids = [ids[i] for i in rows]
            if packed:
                emb = packedencoder.mean_embeddings(model, packedencoder.pack(batch_ids, device))  # (B, D)
            else:
                emb = _padded_embeddings(loaded, batch_ids, device)
            out[torch.tensor(rows, device=device)] = emb.float()
    return out.cpu()


def _padded_embeddings(loaded: LoadedModel, ids: list[list[int]], device: torch.device | str) -> torch.Tensor:
    """Mean-pooled unit embeddings (B, D) of one batch through ``model(**padded_batch)``."""
    with_types = "token_type_ids" in loaded.tokenizer.model_input_names
    batch = _pad_batch(ids, int(loaded.tokenizer.pad_token_id or 0), with_types, str(device))
    hidden = loaded.model(**batch).last_hidden_state  # (B, T, D)
    return mean_pool(hidden, batch["attention_mask"])


def cosine_matrix(a: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """Cosine similarity of unit vectors: a (N, D), b (M, D) -> (N, M); b defaults to a."""
    b = a if b is None else b
    return (a @ b.T).clamp(-1.0, 1.0)  # clamp: rounding can give 1.0000001 on the diagonal


def _model_label(loaded: LoadedModel) -> str:
    return str(getattr(loaded, "name", None) or getattr(loaded, "key", "model"))


def truncation_notices(loaded: LoadedModel, sentences: tuple[str, ...] | list[str]) -> tuple[Notice, ...]:
    """One notice per sentence longer than the model's limit: only its first tokens are embedded
    (exactly what sentence-transformers does, but said out loud)."""
    limit = max_length(loaded)
    counts = [len(x) for x in loaded.tokenizer(list(sentences), add_special_tokens=True)["input_ids"]]
    return tuple(Notice("truncated", f"Line {i + 1} has {n} tokens; only the first {limit} are embedded "
                                     "(the model's limit).") for i, n in enumerate(counts) if n > limit)


def similarity(loaded: LoadedModel, lines: list[str] | str, batch_size: int = 32) -> SimilarityResult:
    """Clean the lines, embed them and return the full cosine matrix."""
    clean = clean_sentences(lines)
    started = time.perf_counter()
    emb = encode(loaded, clean.sentences, batch_size)  # (N, D)
    mat = cosine_matrix(emb)
    rows = tuple(tuple(round(float(v), 6) for v in row) for row in mat.tolist())
    seconds = round(time.perf_counter() - started, 4)
    return SimilarityResult(_model_label(loaded), clean.sentences, rows, int(emb.shape[1]),
                            bool(getattr(loaded, "untrained", False)),
                            clean.notices + truncation_notices(loaded, clean.sentences), seconds,
                            **ran_on(loaded))


def search(loaded: LoadedModel, query: str, lines: list[str] | str, top_k: int | None = None) -> SearchResult:
    """Rank the sentences of ``lines`` by cosine similarity to ``query`` (best first)."""
    q = tidy(query)
    if not q:
        raise ExplorerError("The query is empty: type a sentence to search for.")
    if len(q) > SIMILARITY_LIST_CHARS:
        raise ExplorerError(f"The query is {len(q):,} characters long; the limit is {SIMILARITY_LIST_CHARS:,}.")
    clean = clean_sentences(lines)
    started = time.perf_counter()
    emb = encode(loaded, [q, *clean.sentences])  # (1 + N, D)
    scores = cosine_matrix(emb[:1], emb[1:])[0]  # (N,)
    order = torch.argsort(scores, descending=True, stable=True).tolist()[: top_k or len(clean.sentences)]
    hits = tuple(SearchHit(r + 1, i, clean.sentences[i], round(float(scores[i]), 6)) for r, i in enumerate(order))
    return SearchResult(_model_label(loaded), q, hits, bool(getattr(loaded, "untrained", False)),
                        round(time.perf_counter() - started, 4), **ran_on(loaded))
