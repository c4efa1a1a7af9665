"""A loaded model's own position weights, found through its anatomy card: the learned or fixed table, T5's bias per
bucket, a rotary module's cos and sin.

Every reader returns numpy float32 arrays on the CPU (whatever device and dtype the model runs in), so the
formulas of :mod:`explorer.architecture.positions` can be set beside them.

>>> import transformers
>>> from explorer.internals.located import locate
>>> cfg = transformers.GPT2Config(vocab_size=50, n_embd=16, n_layer=1, n_head=2, n_positions=32)
>>> found = locate(transformers.GPT2LMHeadModel(cfg))
>>> table(found).shape, table_offset(found)
((32, 16), 0)
"""

from __future__ import annotations

import numpy as np
import torch

from explorer.architecture.anatomy.card import Stack
from explorer.architecture.positions import formulas
from explorer.core.errors import ExplorerError
from explorer.internals.located import Located, has

__all__ = ["bias_table", "rotary_check", "rotary_cos_sin", "table", "table_offset"]

_GEMMA_LAYER_TYPES = {"local": "sliding_attention", "global": "full_attention"}


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().float().cpu().numpy()


def _stack(found: Located, name: str | None) -> Stack:
    return found.card.stack(name) if name else found.card.main


def _table_module(found: Located, stack: Stack) -> torch.nn.Module:
    path = stack.positions.module or stack.embeddings.positions
    if stack.positions.kind not in ("learned-absolute", "sinusoidal") or not path or not has(found.model,
                                                                                             found.path(path)):
        raise ExplorerError(f"{found.card.label}'s {stack.name} has no position table ({stack.positions.kind} "
                            "positions): pick a model with learned or sinusoidal positions.")
    return found.at(path)


def table(found: Located, stack: str | None = None) -> np.ndarray:
    """``(rows, width)``: the position table the card names (a learned embedding's weight, M2M-100's sinusoid
    buffer), every row, the never-used offset rows included; CTRL's fixed table is a buffer of its base model."""
    part = _stack(found, stack)
    if part.positions.kind == "sinusoidal" and part.positions.module is None:  # CTRL: pos_encoding, no module
        buffer = getattr(found.model.get_submodule(found.prefix.rstrip(".")), "pos_encoding", None)
        if isinstance(buffer, torch.Tensor):
            return _numpy(buffer)
    module = _table_module(found, part)
    weight = getattr(module, "weight", None)
    weight = weight if isinstance(weight, torch.Tensor) else getattr(module, "weights", None)
    if not isinstance(weight, torch.Tensor):
        raise ExplorerError(f"{found.card.label}'s position module holds no table the explorer can read.")
    return _numpy(weight)


def table_offset(found: Located, stack: str | None = None) -> int:
    """The row of position 0: the module's own offset (BART's and M2M-100's 2), else the card's (RoBERTa's)."""
    part = _stack(found, stack)
    path = part.positions.module or part.embeddings.positions
    own = getattr(found.at(path), "offset", None) if path and has(found.model, found.path(path)) else None
    return int(own) if isinstance(own, int) else int(found.numbers.positions.offset)


def bias_table(found: Located, stack: str | None = None) -> np.ndarray:
    """``(buckets, heads)``: T5's learned bias of each bucket of relative distance, per head (layer 0's, which every
    layer of the stack reuses)."""
    part = _stack(found, stack)
    path = part.block.bias
    if part.positions.kind != "relative-buckets" or path is None or not has(found.model, found.path(path)):
        raise ExplorerError(f"{found.card.label} has no relative-position bias table: it uses "
                            f"{part.positions.kind} positions.")
    weight = found.at(path).weight
    assert isinstance(weight, torch.Tensor)  # an nn.Embedding's
    return _numpy(weight)


def rotary_cos_sin(found: Located, positions: np.ndarray, layer_kind: str = "all") -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)``, each ``(P, rotary dims)``, exactly as the model's own rotary code applies them per dimension
    at ``positions``: Gemma's ``rotary_emb(x, position_ids, layer_type)`` (halves), GPT-J's ``embed_positions``
    buffer of layer 0 repeated for each pair's two dimensions."""
    stack, ids = found.card.main, torch.as_tensor(np.asarray(positions), dtype=torch.long)
    if stack.positions.kind != "rotary":
        raise ExplorerError(f"{found.card.label} has no rotary positions ({stack.positions.kind}).")
    with torch.no_grad():
        if stack.positions.module:  # one module for the model (Gemma): its output for this layer kind
            module = found.at(stack.positions.module)
            probe = torch.zeros(1, dtype=torch.float32, device=next(module.buffers()).device)
            cos, sin = module(probe, ids[None, :].to(probe.device), _GEMMA_LAYER_TYPES.get(layer_kind, layer_kind))
            return _numpy(cos[0]), _numpy(sin[0])
        attn = found.at(stack.block.attn, 0)  # GPT-J: the sin | cos buffer of each attention
        buffer = attn.embed_positions
        assert isinstance(buffer, torch.Tensor)  # GPTJAttention's (max_positions, rotary dims) buffer
        sincos = buffer.to(ids.device)[ids].float()
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        return _numpy(torch.repeat_interleave(cos, 2, -1)), _numpy(torch.repeat_interleave(sin, 2, -1))


def _per_dimension(angles: np.ndarray, layout: str) -> np.ndarray:
    """``(P, dims // 2)`` angles per pair as ``(P, dims)`` per dimension, in the model's layout."""
    return np.repeat(angles, 2, axis=-1) if layout == "pairs" else np.concatenate([angles, angles], axis=-1)


def rotary_check(found: Located, positions: np.ndarray, layout: str, dims: int) -> tuple[tuple[str, float], ...]:
    """For each base the model uses, the largest difference between its rotary module's cos/sin and the formula's
    (``formulas.rope_angles``) at ``positions``."""
    out = []
    for kind, base in found.numbers.positions.bases:
        cos, sin = rotary_cos_sin(found, positions, kind)
        angles = _per_dimension(formulas.rope_angles(positions, dims, base), layout)
        out.append((kind, float(max(np.abs(cos - np.cos(angles)).max(), np.abs(sin - np.sin(angles)).max()))))
    return tuple(out)
