"""The explained number of a batch of frames, from the embeddings of their rows: one forward, any family.

Every method needs the same function ``f(embeddings) -> number`` (:mod:`explorer.explain.frame`): gradients
differentiate it, integrated gradients integrate along a path of embeddings, occlusion evaluates it on frames
with a token left out. :class:`Embedder` is the model's own input embedding of the attributed rows held in a
module of its own, so captum's hook goes on that module and never on the model, which other requests share.
A frame's rows go to the model as ``inputs_embeds`` (the model adds positions, token types and its norm as
usual); an encoder-decoder's decoder rows go as ids.

Batches: frames of the same shape (S rows each) are stacked into ``B * S`` padded rows (right padding, masked
out). A decoder that can keep only some positions' logits (``logits_to_keep``) computes its 262,144-way head
only where a term reads (Gemma 3's head is two thirds of a short prompt's forward).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import torch

from explorer.architecture.modeltypes import is_encoder_decoder
from explorer.explain.frame import Frame
from explorer.runtime.offload import input_device
from explorer.tasks.similarity import mean_pool

if TYPE_CHECKING:  # typing only: transformers comes with the model
    from transformers import PreTrainedModel

__all__ = ["Batch", "Embedder", "batch_of", "keeps_logits", "no_logits", "score", "values"]


class Embedder(torch.nn.Module):
    """The model's input embedding of the attributed rows (an encoder-decoder's encoder's): ``(N, T)`` ids ->
    ``(N, T, d)`` embeddings, exactly as the model computes them (Gemma's scaling included)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        hf = cast("PreTrainedModel", model)  # its getters return modules (torch types attributes loosely)
        side = hf.get_encoder() if is_encoder_decoder(hf.config) else hf
        self.inner: torch.nn.Module = getattr(side, "embed_tokens", None) or side.get_input_embeddings()

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.inner(ids)


@dataclass(frozen=True)
class Batch:
    """``B`` frames of ``S`` rows each, padded: ids and mask ``(B*S, T)``, decoder ids and mask ``(B*S, Td)``
    (encoder-decoders), and the terms flattened (``K`` of them: row in the batch, logit position, token, sign,
    frame index)."""

    kind: str
    frames: int
    per: int
    ids: torch.Tensor
    mask: torch.Tensor
    decoder: torch.Tensor | None
    decoder_mask: torch.Tensor | None
    term_row: torch.Tensor
    term_at: torch.Tensor
    term_token: torch.Tensor
    term_sign: torch.Tensor
    term_frame: torch.Tensor

    def tiled(self, copies: int) -> Batch:
        """This batch of one frame repeated ``copies`` times (integrated gradients' steps), rows in order
        ``(copy 0: rows 0..S-1, copy 1: ...)``; the ids are the caller's (captum builds them)."""
        if self.frames != 1:
            raise ValueError("only a batch of one frame is tiled")
        rows = torch.arange(copies, device=self.ids.device)
        k = self.term_row.shape[0]

        def tile(t: torch.Tensor | None) -> torch.Tensor | None:
            return None if t is None else t.repeat(copies, 1)

        return Batch(self.kind, copies, self.per, self.ids.repeat(copies, 1), self.mask.repeat(copies, 1),
                     tile(self.decoder), tile(self.decoder_mask),
                     (self.term_row[None, :] + self.per * rows[:, None]).reshape(-1), self.term_at.repeat(copies),
                     self.term_token.repeat(copies), self.term_sign.repeat(copies),
                     rows.repeat_interleave(k))


def _padded(rows: Sequence[Sequence[int]], pad: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
        mask[i, : len(r)] = 1
    return ids.to(device), mask.to(device)


def batch_of(frames: Sequence[Frame], device: torch.device | str) -> Batch:
    """The frames (all of one kind and row count) as one padded batch on ``device``."""
    first, dev = frames[0], torch.device(device)
    per = len(first.rows)
    ids, mask = _padded([r for f in frames for r in f.rows], first.baseline_id, dev)
    decoder = decoder_mask = None
    if first.kind == "seq2seq":
        decoder, decoder_mask = _padded([r for f in frames for r in f.decoder], first.baseline_id, dev)
    terms = [(b * per + t.row, t.at - f.shift, t.token, t.sign, b) for b, f in enumerate(frames) for t in f.terms]
    cols = list(zip(*terms, strict=True)) if terms else [(), (), (), (), ()]
    as_long = [torch.tensor(c, dtype=torch.long, device=dev) for c in (cols[0], cols[1], cols[2], cols[4])]
    sign = torch.tensor(cols[3], dtype=torch.float32, device=dev)
    return Batch(first.kind, len(frames), per, ids, mask, decoder, decoder_mask, as_long[0], as_long[1], as_long[2],
                 sign, as_long[3])


def keeps_logits(model: torch.nn.Module) -> bool:
    """Whether the model's forward takes ``logits_to_keep`` (decoders in transformers 5)."""
    return "logits_to_keep" in inspect.signature(model.forward).parameters


def no_logits(model: torch.nn.Module, device: torch.device | str) -> dict[str, object]:
    """Forward arguments that skip a decoder's head altogether (the lens and the tuned lens read every layer
    through it themselves): an empty ``logits_to_keep``; nothing for a model without the argument."""
    return {"logits_to_keep": torch.zeros(0, dtype=torch.long, device=device)} if keeps_logits(model) else {}


def _logits(model: torch.nn.Module, batch: Batch, embeds: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(logits ``(N, P, V)``, the term positions as indices into P)."""
    if batch.kind == "seq2seq":
        out = model(inputs_embeds=embeds, attention_mask=batch.mask, decoder_input_ids=batch.decoder,
                    decoder_attention_mask=batch.decoder_mask, use_cache=False)
        return out.logits, batch.term_at
    if batch.kind == "causal" and keeps_logits(model):
        kept, where = torch.unique(batch.term_at, return_inverse=True)  # sorted positions the terms read
        out = model(inputs_embeds=embeds, attention_mask=batch.mask, logits_to_keep=kept, use_cache=False)
        return out.logits, where
    kwargs = {"use_cache": False} if batch.kind == "causal" else {}
    return model(inputs_embeds=embeds, attention_mask=batch.mask, **kwargs).logits, batch.term_at


def score(model: torch.nn.Module, batch: Batch, embeds: torch.Tensor) -> torch.Tensor:
    """The explained number of each frame, ``(B,)`` float32, from the rows' embeddings ``(B*S, T, d)``
    (differentiable: no ``inference_mode`` here)."""
    if batch.kind == "pair":
        hidden = model(inputs_embeds=embeds, attention_mask=batch.mask).last_hidden_state  # (B*S, T, D)
        pooled = mean_pool(hidden.float(), batch.mask).reshape(batch.frames, batch.per, -1)  # (B, 2, D) unit
        return (pooled[:, 0] * pooled[:, 1]).sum(-1)
    logits, where = _logits(model, batch, embeds)
    picked = logits[batch.term_row, where].float().log_softmax(-1)  # (K, V): only the rows the terms read
    terms = picked.gather(1, batch.term_token[:, None])[:, 0] * batch.term_sign  # (K,)
    return torch.zeros(batch.frames, device=terms.device).index_add(0, batch.term_frame, terms)


def values(model: torch.nn.Module, frames: Sequence[Frame], embedder: Embedder | None = None) -> torch.Tensor:
    """The explained number of every frame (no gradients), ``(B,)`` on the CPU."""
    if not frames:
        return torch.zeros(0)
    embedder = embedder or Embedder(model)
    if len({len(f.rows) for f in frames}) > 1:  # a batch holds frames of one row count: score each count apart
        out = torch.zeros(len(frames))
        for count in {len(f.rows) for f in frames}:
            picked = [i for i, f in enumerate(frames) if len(f.rows) == count]
            out[picked] = values(model, [frames[i] for i in picked], embedder)
        return out
    batch = batch_of(frames, input_device(model))
    with torch.inference_mode():
        return score(model, batch, embedder(batch.ids)).float().cpu()
