"""A BERT encoder run on packed tokens: no padding goes through the linear layers.

``BertModel(**padded_batch)`` multiplies every padding position by every weight matrix. For a
bi-encoder the linear layers are nearly all the work (MiniLM, 20-token sentences: about 90% of
the time), so padding is waste in proportion: with 1,000 sentences of mixed length sorted by token
count, batches of 128 push 64% more tokens than there are (37,312 for 22,699), batches of 32 still
14%. Here the tokens of a batch are concatenated into one (N, D) matrix for every linear layer,
LayerNorm and activation; only the attention, which needs each sentence's own tokens, scatters
them into a padded (B, H, T, d) grid and gathers them back. Mean pooling sums each sentence's rows.

On the CPU in float32 the weights are also prepacked once per model for oneDNN (PyTorch's
``mkldnn._linear_pointwise``, the kernel ``torch.compile`` freezing uses, GELU fused into the first
feed-forward matrix): measured 1.16-1.2x faster per matrix than ``F.linear`` on one thread and up
to 2x on two busy ones (benchmarks/results/similarity.md). The prepacked copies are kept beside the
model (the model itself is never changed) and cost one more copy of the encoder's weights.

Only plain BERT encoders take this path (absolute positions from 0, one segment, post-LayerNorm):
``supports`` says which; anything else keeps the padded ``model(**batch)`` path.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

__all__ = ["Packed", "mean_embeddings", "pack", "supports"]

_ACTS = {"gelu": "gelu", "relu": "relu"}  # hidden_act -> oneDNN post-op (exact erf GELU, as BERT's "gelu")
_PREPARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Packed:
    """One batch of B sentences as N packed tokens, and where each token sits in the padded grid."""

    ids: torch.Tensor  # (N,) token ids, sentence after sentence
    positions: torch.Tensor  # (N,) 0..len-1 within its sentence
    grid_rows: torch.Tensor  # (N,) row of each token in the flattened (B * T) grid
    segment: torch.Tensor  # (N,) which sentence each token belongs to
    lengths: torch.Tensor  # (B,) tokens per sentence
    key_mask: torch.Tensor  # (B, 1, 1, T) True where a key is a real token
    width: int  # T, the longest sentence of the batch


def supports(model: torch.nn.Module) -> bool:
    """Whether ``model`` is a plain BERT encoder this module can run (else: use ``model(**batch)``)."""
    cfg = getattr(model, "config", None)
    if getattr(cfg, "model_type", None) != "bert" or getattr(cfg, "is_decoder", False) or model.training:
        return False
    if getattr(model, "hf_device_map", None) or any(p.device.type == "meta" for p in model.parameters()):
        return False  # accelerate places (or streams) the layers: only its hooked forward knows where
    if (getattr(cfg, "position_embedding_type", "absolute") != "absolute"
            or getattr(cfg, "hidden_act", None) not in _ACTS):
        return False
    emb, enc = getattr(model, "embeddings", None), getattr(model, "encoder", None)
    parts = ("word_embeddings", "position_embeddings", "token_type_embeddings", "LayerNorm")
    return emb is not None and enc is not None and all(hasattr(emb, p) for p in parts) and all(
        hasattr(layer, "attention") and hasattr(layer.attention, "self") and hasattr(layer, "intermediate")
        and not getattr(layer, "add_cross_attention", False) for layer in enc.layer)


def pack(ids: list[list[int]], device: torch.device | str) -> Packed:
    """The packed form of a batch of token id lists (built on the CPU, moved in one go)."""
    lengths = torch.tensor([len(x) for x in ids], dtype=torch.long)  # (B,)
    width = int(lengths.max())
    real = torch.arange(width)[None, :] < lengths[:, None]  # (B, T)
    flat = torch.tensor([t for seq in ids for t in seq], dtype=torch.long)  # (N,)
    positions = torch.cat([torch.arange(n) for n in lengths.tolist()])  # (N,)
    segment = torch.repeat_interleave(torch.arange(len(ids)), lengths)  # (N,)
    rows = real.reshape(-1).nonzero().squeeze(1)  # (N,)
    def move(t: torch.Tensor) -> torch.Tensor:
        return t.to(device=device, non_blocking=True)

    return Packed(move(flat), move(positions), move(rows), move(segment), move(lengths), move(real[:, None, None, :]),
                  width)


class _Linear:
    """One linear layer, prepacked for oneDNN on a float32 CPU model, else plain ``F.linear``."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor, onednn: bool) -> None:
        self.bias, self.onednn = bias.detach(), onednn
        self.weight = torch.ops.mkldnn._reorder_linear_weight(weight.detach()) if onednn else weight.detach()

    def __call__(self, x: torch.Tensor, act: str = "none") -> torch.Tensor:
        """(N, in) -> (N, out), with the activation ``act`` applied ("none", "gelu", "relu")."""
        if self.onednn:
            return torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, act, [],
                                                      "none" if act == "gelu" else "")
        y = F.linear(x, self.weight, self.bias)
        return y if act == "none" else (F.gelu(y) if act == "gelu" else F.relu(y))


def _onednn(weight: torch.Tensor) -> bool:
    """oneDNN prepacking pays off on the CPU in float32 (and exists in this PyTorch build)."""
    return (weight.device.type == "cpu" and weight.dtype == torch.float32 and torch.backends.mkldnn.is_available()
            and hasattr(torch.ops.mkldnn, "_linear_pointwise"))


def _prepared(model: torch.nn.Module) -> list[tuple[_Linear, _Linear, _Linear, _Linear]]:
    """Per layer: (query|key|value fused, attention output, feed-forward in, feed-forward out); once per model."""
    with _LOCK:
        if model not in _PREPARED:
            bert: Any = model  # a BertModel (``supports`` checked): its submodules are looked up by name
            layers = []
            for layer in bert.encoder.layer:
                att = layer.attention.self
                onednn = _onednn(att.query.weight)
                qkv_w = torch.cat([att.query.weight, att.key.weight, att.value.weight])  # (3D, D)
                qkv_b = torch.cat([att.query.bias, att.key.bias, att.value.bias])  # (3D,)
                layers.append((_Linear(qkv_w, qkv_b, onednn),
                               _Linear(layer.attention.output.dense.weight, layer.attention.output.dense.bias, onednn),
                               _Linear(layer.intermediate.dense.weight, layer.intermediate.dense.bias, onednn),
                               _Linear(layer.output.dense.weight, layer.output.dense.bias, onednn)))
            _PREPARED[model] = layers
        return _PREPARED[model]


def _attention(x: torch.Tensor, batch: Packed, heads: int, scale: float) -> torch.Tensor:
    """Self-attention of packed q|k|v rows x (N, 3D) within each sentence -> (N, D)."""
    width, dim = batch.width, x.shape[1] // 3
    grid = x.new_zeros(batch.lengths.shape[0] * width, 3 * dim)  # (B*T, 3D)
    grid.index_copy_(0, batch.grid_rows, x)
    q, k, v = grid.view(-1, width, 3, heads, dim // heads).permute(2, 0, 3, 1, 4).unbind(0)  # 3 x (B, H, T, d)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=batch.key_mask, scale=scale)  # (B, H, T, d)
    return out.transpose(1, 2).reshape(-1, dim).index_select(0, batch.grid_rows)  # (N, D)


def mean_embeddings(model: torch.nn.Module, batch: Packed) -> torch.Tensor:
    """Unit-length mean of each sentence's last hidden states: (B, D), as Pooling + Normalize in
    sentence-transformers (padding never enters the mean because it is never computed)."""
    bert: Any = model  # a BertModel (``supports`` checked): its submodules are looked up by name
    emb, cfg = bert.embeddings, bert.config
    hidden = (emb.word_embeddings(batch.ids) + emb.position_embeddings(batch.positions)
              + emb.token_type_embeddings.weight[0])  # (N, D): single segment, type 0
    hidden = emb.LayerNorm(hidden)
    act = _ACTS[cfg.hidden_act]
    for layer, (qkv, att_out, ff_in, ff_out) in zip(bert.encoder.layer, _prepared(model), strict=True):
        ctx = _attention(qkv(hidden), batch, cfg.num_attention_heads, layer.attention.self.scaling)
        hidden = layer.attention.output.LayerNorm(att_out(ctx) + hidden)
        hidden = layer.output.LayerNorm(ff_out(ff_in(hidden, act)) + hidden)
    summed = hidden.new_zeros(batch.lengths.shape[0], hidden.shape[1]).index_add_(0, batch.segment, hidden)  # (B, D)
    return F.normalize(summed / batch.lengths[:, None].to(hidden.dtype), p=2, dim=1)
