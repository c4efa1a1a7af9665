"""Model attention outputs -> full square numpy stacks ``(layers, H, Lq, Lk)``, sparse formats included.

- Dense outputs (BERT, GPT-2, T5...) are stacked and cropped of any internal padding (:func:`stack_layers`).
- Longformer returns its sliding-window rows ``(B, H, L, n_global + 2w + 1)`` and, separately, what
  the global tokens see; :func:`longformer_to_square` scatters both back onto ``(H, L, L)``.
- BigBird's block-sparse output is padded to a multiple of ``block_size`` (cropped by
  :func:`stack_layers`); :func:`bigbird_runner` fixes its attention type *before* the forward pass.

Attention weights only exist with the ``eager`` kernel in transformers 5: ``sdpa`` silently returns
an empty tuple, which becomes a clear :class:`ExplorerError`, not an empty plot.

>>> import numpy as np
>>> local = np.zeros((1, 3, 1 + 3))  # 1 head, 3 tokens, token 0 global, window 1 each side
>>> local[:, :, 0] = 0.5  # every row: half its weight on the global token
>>> local[:, 1:, 1 + 1] = 0.5  # rows 1 and 2: the other half on themselves (window slot 1 = offset 0)
>>> longformer_to_square(local, None, (0,))[0].tolist()
[[0.5, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5]]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from explorer.architecture.modeltypes import bigbird_falls_back
from explorer.core.errors import ExplorerError

if TYPE_CHECKING:  # typing only: the models bring transformers
    from transformers import PreTrainedModel

__all__ = ["bigbird_runner", "longformer_stack", "longformer_to_square", "no_attention_error", "stack_layers"]


def no_attention_error(model: PreTrainedModel, what: str) -> ExplorerError:
    """The message for a model that returned no weights (a non-eager kernel, or no softmax attention)."""
    impl = getattr(model.config, "_attn_implementation", None) or "unknown"
    return ExplorerError(
        f"{type(model).__name__} returned no {what} weights (attention kernel: {impl}). Only the "
        "'eager' kernel exposes them: load the model with attn_implementation='eager' "
        "(models without softmax attention have none to show).")


def stack_layers(layers: Any, model: PreTrainedModel, what: str, shape: tuple[int, int]) -> np.ndarray:
    """``tuple[layers]`` of ``(1, H, Lq', Lk')`` tensors -> ``(layers, H, Lq, Lk)`` float32, cropped."""
    if not layers:  # sdpa / flash kernels give () silently
        raise no_attention_error(model, what)
    mats = []
    for a in layers:
        a = a[0].float().cpu().numpy()  # (H, Lq', Lk'): first (only) batch item
        if a.ndim != 3 or a.shape[1] < shape[0] or a.shape[2] < shape[1]:
            raise ExplorerError(f"{what} weights of shape {tuple(a.shape)} do not fit {shape[0]}x{shape[1]} "
                                "tokens: this model's attention output is not supported.")
        mats.append(a[:, : shape[0], : shape[1]])  # models that pad internally: crop the padding
    return np.stack(mats).astype(np.float32, copy=False)


def longformer_to_square(local: np.ndarray, global_attn: np.ndarray | None,
                         global_idx: tuple[int, ...]) -> np.ndarray:
    """Scatter one Longformer layer's output back onto the full ``(H, L, L)`` matrix.

    ``local``: ``(H, L, n_global + 2w + 1)``; column ``g < n_global`` is the weight on global
    token ``global_idx[g]``, column ``n_global + j`` the weight on key ``i - w + j`` (keys outside
    the text or global ones hold 0 there: their weight lives in the first columns).
    ``global_attn``: ``(H, Lp, n_global)`` (Lp = length padded to the window), where
    ``[h, k, g]`` is what global token ``g`` gives key ``k``; Longformer zeroes those rows in
    ``local`` because they were computed separately.
    """
    n_heads, length, width = local.shape
    n_global = len(global_idx)
    w = (width - n_global - 1) // 2
    if w < 0 or width != n_global + 2 * w + 1:
        raise ExplorerError(f"Unexpected Longformer attention width {width} for {n_global} global "
                            "tokens (expected n_global + 2 * window + 1): this checkpoint is not supported.")
    out = np.zeros((n_heads, length, length), dtype=np.float32)
    rows = np.arange(length)
    for j in range(2 * w + 1):  # one diagonal of the band per window slot
        keys = rows - w + j
        ok = (keys >= 0) & (keys < length)
        out[:, rows[ok], keys[ok]] = local[:, rows[ok], n_global + j]
    if n_global:
        idx = np.asarray(global_idx)
        out[:, :, idx] = local[:, :, :n_global]  # everyone -> global tokens
        if global_attn is not None:  # global tokens -> everyone (their own rows)
            out[:, idx, :] = np.transpose(global_attn[:, :length, :], (0, 2, 1))
    return out


def longformer_stack(out: Any, model: PreTrainedModel, global_idx: tuple[int, ...]) -> np.ndarray:
    """Every Longformer layer mapped onto ``(H, L, L)``, stacked to ``(layers, H, L, L)``."""
    if not out.attentions:
        raise no_attention_error(model, "attention")
    glob = out.global_attentions or (None,) * len(out.attentions)
    mats = [longformer_to_square(loc[0].float().cpu().numpy(),
                                 None if g is None else g[0].float().cpu().numpy(), global_idx)
            for loc, g in zip(out.attentions, glob, strict=True)]
    return np.stack(mats)


def bigbird_runner(model: PreTrainedModel, length: int) -> tuple[PreTrainedModel, str]:
    """A BigBird whose attention type is fixed *before* the forward pass, sharing ``model``'s weights.

    BigBird switches itself to full attention during a forward on short inputs
    (:func:`explorer.architecture.modeltypes.bigbird_falls_back`) and from then on returns ``()`` for
    attentions, because the output hooks sit on the modules it replaced. We never run the
    shared cached model: a sibling is built on the meta device with the wanted type and takes
    the same tensors (``assign=True``: no copy), so the cached instance is never mutated.
    Returns the sibling and the output format (``bigbird-full`` or ``bigbird-block-sparse``).
    """
    import torch

    cfg = model.config
    short = bigbird_falls_back(length, cfg.block_size, cfg.num_random_blocks)
    wanted = "original_full" if short or cfg.attention_type == "original_full" else "block_sparse"
    new_cfg = type(cfg).from_dict(cfg.to_dict())
    new_cfg.attention_type = wanted
    new_cfg._attn_implementation = "eager"
    with torch.device("meta"):
        sibling = type(model)(new_cfg)
    sibling.load_state_dict(model.state_dict(), assign=True, strict=True)
    for name, buf in model.named_buffers():  # non-persistent buffers are not in the state dict
        owner, _, attr = name.rpartition(".")
        setattr(sibling.get_submodule(owner) if owner else sibling, attr, buf)
    return sibling.eval(), ("bigbird-full" if wanted == "original_full" else "bigbird-block-sparse")
