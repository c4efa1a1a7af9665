"""The vectors a projector draws: one per sentence (a sentence embedding) or one per token (a layer's states).

* an encoder's sentence embedding: with no layer named, Sentence-BERT's recipe (:func:`explorer.tasks.similarity
  .encode`: the last layer mean-pooled over the tokens, unit length; for all-MiniLM-L6-v2 equal to
  ``SentenceTransformer.encode``); with a layer, that layer's states mean-pooled the same way;
* a decoder's (Gemma mean-pooled): the final hidden states (after the last norm) or a layer's, averaged over the
  text's tokens but its special ones (Gemma's ``<bos>`` state is hundreds of times larger than the others and
  would be every sentence's mean), unit length;
* a served model's: its ``/v1/embeddings`` (:func:`explorer.serving.embedding.embed`, in lists of at most 200);
* token states: every token of every text at one layer, a point each, labelled by the token and its sentence.

Texts go through the model in padded batches of similar length sized by :mod:`explorer.runtime.activations`,
with a stop check and a progress report between batches.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F

from explorer.architecture.modeltypes import num_layers
from explorer.core.errors import ExplorerError
from explorer.core.limits import SIMILARITY_LIST_CHARS
from explorer.core.locks import lock_of
from explorer.runtime import activations, cancel, modelkind
from explorer.runtime.loading import LoadedModel, load_model
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on
from explorer.serving import embedding, probe
from explorer.serving.backend import Backend
from explorer.serving.endpoints import Endpoint
from explorer.tasks import similarity

__all__ = ["MAX_TOKEN_POINTS", "Vectors", "concat", "in_parts", "sentences", "served", "tokens"]

MAX_TOKEN_POINTS = 20_000  # token states drawn at once (WebGL draws them; hover and neighbours stay quick)
SERVED_LIST = similarity.MAX_SENTENCES  # texts per served call (its own cap on one list)
BATCH = 32
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Vectors:
    """Points to project: ``matrix`` (N, D) float32, a hover label and the text each point comes from."""

    model: str
    kind: str  # "sentences" or "tokens"
    matrix: np.ndarray  # (N, D)
    labels: tuple[str, ...]  # (N,) what hovering a point shows
    owners: tuple[int, ...]  # (N,) index of the text each point belongs to
    how: str  # how the vectors were made, in words
    layer: int | None = None
    seconds: float = 0.0
    device: str = "cpu"
    device_name: str = "cpu"
    dtype: str = "float32"
    left_out: int = 0  # texts not embedded: the request's budget ended first (:func:`in_parts`)


def _layer(loaded: LoadedModel, layer: int | None) -> int | None:
    if layer is None:
        return None
    count = num_layers(loaded.model.config) or 0
    if not 0 <= layer <= count:
        raise ExplorerError(f"{loaded.key} has layers 0 (the embeddings) to {count}: layer {layer} is not one.")
    return layer


def _batches(loaded: LoadedModel, ids: list[list[int]], progress: Progress | None) -> list[list[int]]:
    budget = activations.tokens_per_forward(loaded.model.config, max(len(x) for x in ids))
    plan = activations.plan_batches([len(x) for x in ids], BATCH, budget)
    if progress is not None:
        progress(0.0, f"{loaded.key}: embedding {len(ids):,} texts")
    return plan


def _states(loaded: LoadedModel, rows: list[list[int]], layer: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Hidden states (B, T, D) of right-padded ``rows`` at ``layer`` (None: the final, normed ones), mask (B, T)."""
    device = input_device(loaded.model)
    width = max(len(r) for r in rows)
    pad = int(getattr(loaded.tokenizer, "pad_token_id", None) or 0)
    x = torch.tensor([r + [pad] * (width - len(r)) for r in rows], device=device)  # (B, T)
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows], device=device)  # (B, T)
    base: torch.nn.Module = loaded.model.base_model
    if modelkind.config_family(loaded.model.config.to_dict()) == "encoder-decoder":
        base = loaded.model.get_encoder()
    out = base(input_ids=x, attention_mask=mask, output_hidden_states=layer is not None)
    hidden = out.last_hidden_state if layer is None else out.hidden_states[layer]
    return hidden.float(), mask


def _encode(loaded: LoadedModel, texts: Sequence[str]) -> tuple[list[list[int]], list[list[bool]]]:
    tok = loaded.tokenizer
    limit = min(int(getattr(tok, "model_max_length", 512) or 512), 2048)
    with lock_of(tok):
        enc = tok(list(texts), truncation=True, max_length=limit, return_special_tokens_mask=True)
    return [list(map(int, i)) for i in enc["input_ids"]], [[bool(s) for s in m] for m in enc["special_tokens_mask"]]


def sentences(loaded: LoadedModel, texts: Sequence[str], layer: int | None = None,
              progress: Progress | None = None) -> Vectors:
    """One unit vector per text (mean-pooled states), as the module docstring says for its family."""
    texts, layer = list(texts), _layer(loaded, layer)
    began = time.perf_counter()
    decoder = modelkind.config_family(loaded.model.config.to_dict()) == "decoder"
    if not decoder and layer is None and modelkind.config_family(loaded.model.config.to_dict()) == "encoder":
        matrix = similarity.encode(loaded, texts).numpy()  # (N, D) Sentence-BERT's own recipe
        how = "the last layer mean-pooled over the tokens, unit length (Sentence-BERT)"
    else:
        ids, special = _encode(loaded, texts)
        vectors: dict[int, torch.Tensor] = {}
        with torch.inference_mode():
            for batch in _batches(loaded, ids, progress):
                cancel.check()
                hidden, mask = _states(loaded, [ids[i] for i in batch], layer)
                keep = mask.clone()
                for r, i in enumerate(batch):  # special tokens out (Gemma's <bos> state dwarfs the others)
                    keep[r, : len(special[i])] &= torch.tensor([not s for s in special[i]], device=keep.device)
                pooled = similarity.mean_pool(hidden, keep if bool(keep.any(1).all()) else mask)  # (B, D)
                vectors.update((i, pooled[r].cpu()) for r, i in enumerate(batch))
                if progress is not None:
                    progress(len(vectors) / len(ids), f"{loaded.key}: {len(vectors):,} of {len(ids):,} texts embedded")
        out = torch.stack([vectors[i] for i in range(len(ids))])
        matrix = F.normalize(out, dim=1).numpy()
        where = "the final hidden states" if layer is None else f"layer {layer}'s states"
        how = f"{where} mean-pooled over the tokens but the special ones, unit length"
    return Vectors(loaded.key, "sentences", matrix.astype(np.float32), tuple(texts), tuple(range(len(texts))), how,
                   layer, time.perf_counter() - began, **ran_on(loaded))


def tokens(loaded: LoadedModel, texts: Sequence[str], layer: int | None = None,
           progress: Progress | None = None) -> Vectors:
    """One vector per token of every text at ``layer`` (None: the final states), special tokens left out."""
    texts, layer = list(texts), _layer(loaded, layer)
    began = time.perf_counter()
    ids, special = _encode(loaded, texts)
    if (count := sum(len(i) - sum(s) for i, s in zip(ids, special, strict=True))) > MAX_TOKEN_POINTS:
        raise ExplorerError(f"The texts hold {count:,} tokens; at most {MAX_TOKEN_POINTS:,} token states are "
                            "drawn at once: give fewer or shorter texts, or project sentence embeddings.")
    rows: dict[int, list[tuple[torch.Tensor, str]]] = {}
    with torch.inference_mode():
        for batch in _batches(loaded, ids, progress):
            cancel.check()
            hidden, _ = _states(loaded, [ids[i] for i in batch], layer)
            for r, i in enumerate(batch):
                pieces = loaded.tokenizer.convert_ids_to_tokens(ids[i])
                rows[i] = [(hidden[r, t].cpu(), pieces[t]) for t in range(len(ids[i])) if not special[i][t]]
            if progress is not None:
                progress(len(rows) / len(ids), f"{loaded.key}: {len(rows):,} of {len(ids):,} texts read")
    flat = [(i, vec, piece) for i in range(len(ids)) for vec, piece in rows[i]]
    if not flat:
        raise ExplorerError("The texts hold no tokens but special ones: give some words.")
    matrix = torch.stack([v for _, v, _ in flat]).numpy().astype(np.float32)
    labels = tuple(f"{piece} · {texts[i][:80]}" for i, _, piece in flat)
    where = "the final hidden state" if layer is None else f"layer {layer}'s state"
    return Vectors(loaded.key, "tokens", matrix, labels, tuple(i for i, _, _ in flat),
                   f"{where} of every token (special tokens left out)", layer, time.perf_counter() - began,
                   **ran_on(loaded))


def _lists(texts: list[str]) -> list[list[str]]:
    """The texts in lists a served model embeds in one call: at most :data:`SERVED_LIST` texts and
    :data:`~explorer.core.limits.SIMILARITY_LIST_CHARS` characters (a longer text goes alone)."""
    out: list[list[str]] = [[]]
    size = 0
    for text in texts:
        if out[-1] and (len(out[-1]) >= SERVED_LIST or size + len(text) > SIMILARITY_LIST_CHARS):
            out.append([])
            size = 0
        out[-1].append(text)
        size += len(text)
    return out if out[0] else []


def served(ep: Endpoint, texts: Sequence[str], progress: Progress | None = None) -> Vectors:
    """One unit vector per text from ``ep``'s ``/v1/embeddings`` (lists of at most :data:`SERVED_LIST`)."""
    texts = list(texts)
    began = time.perf_counter()
    parts, done = [], 0
    for chunk in _lists(texts):
        cancel.check()
        parts.append(embedding.embed(ep, chunk).float().numpy())
        done += len(chunk)
        if progress is not None:
            progress(done / len(texts), f"{ep.shown}: {done:,} of {len(texts):,} texts embedded")
    caps = probe.capabilities(ep)
    return Vectors(ep.key, "sentences", np.concatenate(parts).astype(np.float32), tuple(texts),
                   tuple(range(len(texts))), "the server's /v1/embeddings, unit length", None,
                   time.perf_counter() - began, **probe.served_on(ep, caps))


def of_model(model: Backend, texts: Sequence[str], layer: int | None = None, per_token: bool = False) -> Vectors:
    """The vectors of ``texts`` from a backend: a model here gives its sentence embeddings or one layer's states (a
    decoder loaded as a causal LM, shared with its scoring, any other model bare); a served one its engine's
    sentence embeddings (``layer`` and ``per_token`` are a model here's)."""
    if model.endpoint is not None:
        return served(model.endpoint, texts)
    if model.ref is None:
        raise ExplorerError(f"{model.shown} was not resolved here: build its backend from the resolved model.")
    device, dtype = model.placement
    loaded = load_model(model.ref, model.ref.task("base"), device=device, dtype=dtype, purpose="the Evaluate page")
    return (tokens if per_token else sentences)(loaded, texts, layer)


def in_parts(make: Callable[[tuple[str, ...]], Vectors], texts: Sequence[str], size: int, budget: float,
             who: str, progress: Progress | None = None) -> Vectors:
    """The vectors of ``texts``, ``size`` at a time (``make(part)``: each its own request, cached by the page), with
    progress after each part, until every text is embedded or the parts' time together passes ``budget`` seconds:
    then the texts embedded so far, and ``left_out`` says how many were not (embedding them again hits the parts
    cached, so each run goes further).

    >>> make = lambda part: Vectors("m", "sentences", np.ones((len(part), 2), np.float32), part,
    ...                             tuple(range(len(part))), "ones", seconds=1.0)
    >>> whole = in_parts(make, ["a", "b", "c"], 2, budget=60, who="m")
    >>> whole.labels, whole.owners, whole.left_out
    (('a', 'b', 'c'), (0, 1, 2), 0)
    >>> cut = in_parts(make, ["a", "b", "c"], 2, budget=0.5, who="m")
    >>> cut.labels, cut.left_out
    (('a', 'b'), 1)
    """
    texts = tuple(texts)
    parts: list[Vectors] = []
    done = 0
    for start in range(0, len(texts), size):
        parts.append(make(texts[start:start + size]))
        done = min(len(texts), start + size)
        if progress is not None:
            progress(done / len(texts), f"{who}: {done:,} of {len(texts):,} texts embedded")
        if done < len(texts) and sum(p.seconds for p in parts) > budget:
            break
    return replace(concat(parts), left_out=len(texts) - done)


def left_out_notice(vec: Vectors) -> str | None:
    """What a projection of a cut embedding says, or None when every text was embedded."""
    if not vec.left_out:
        return None
    owners = max(vec.owners, default=-1) + 1
    return (f"{vec.model}: {owners:,} of {owners + vec.left_out:,} texts embedded within this request's time budget; "
            f"the last {vec.left_out:,} are not drawn. Run it again to embed the rest (the texts embedded so far are "
            "kept), or give fewer texts.")


def concat(parts: Sequence[Vectors]) -> Vectors:
    """The vectors of consecutive lists of texts as one (the owners renumbered to follow on)."""
    owners: list[int] = []
    offset = 0
    for p in parts:
        owners.extend(o + offset for o in p.owners)
        offset += max(p.owners, default=-1) + 1
    head = parts[0]
    return Vectors(head.model, head.kind, np.concatenate([p.matrix for p in parts]), tuple(lb for p in parts
                   for lb in p.labels), tuple(owners), head.how, head.layer, sum(p.seconds for p in parts),
                   head.device, head.device_name, head.dtype)
