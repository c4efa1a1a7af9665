"""Config -> pattern: read a published config dict and build the :class:`PatternSpec` of one layer.

Configs name the same thing differently (``hidden_size`` / ``d_model`` / ``n_embd``; ``num_layers``
/ ``n_layer``...); :func:`head_dim` and :func:`max_positions` read all spellings (layer and head counts
through :mod:`explorer.architecture.modeltypes`, their one home).
``attention`` is the catalog's attention label of the variant (``full``, ``causal``,
``sliding-window+global``, ``block-sparse``, ``local-global-alternating``...).

>>> cfg = {"hidden_size": 768, "num_attention_heads": 12, "block_size": 64, "num_random_blocks": 3}
>>> label, spec = self_attention_spec("block-sparse", cfg, layer=0, seq_len=705, global_positions=(),
...                                   seed=0, dilation=1)
>>> label, spec.kind, spec.d_head
('block-sparse', 'block-sparse', 64)
>>> self_attention_spec("block-sparse", cfg, 0, 704, (), 0, 1)[0]
'full (short-input fallback)'
"""

from __future__ import annotations

from typing import Any

from explorer.architecture import modeltypes
from explorer.architecture.catalog import Variant
from explorer.architecture.modeltypes import RELATIVE_POSITION_TYPES, position_offset
from explorer.architecture.patterns.kinds import (
    PatternSpec,
    block_sparse,
    causal,
    effective_kind,
    full,
    local_causal,
    sliding_window,
)
from explorer.core.errors import ExplorerError, shorten

__all__ = ["KNOWN_ATTENTION", "alternating_layers", "head_dim", "max_positions",
           "self_attention_spec"]

_FULL_LABELS = ("full", "disentangled", "encoder-decoder")  # DeBERTa changes scores, not who attends
KNOWN_ATTENTION = (*_FULL_LABELS, "causal", "sliding-window+global", "block-sparse", "local-global-alternating")
_LOCAL_NAMES = {"local", "sparse", "banded", "local-banded"}
# transformers' layer_types names -> the kinds above (Gemma 3's sliding window is causal and local)
_LAYER_TYPE_NAMES = {"sliding_attention": "local", "full_attention": "global", "chunked_attention": "local"}


def _first(cfg: dict[str, object], *names: str) -> Any:
    """The first of ``names`` present (and not None) in a config dict."""
    return next((cfg[n] for n in names if cfg.get(n) is not None), None)


def head_dim(cfg: dict[str, object]) -> int:
    """Per-head width d_head (:func:`modeltypes.head_width`; 64 when the config says nothing)."""
    return modeltypes.head_width(cfg) or 64


def alternating_layers(cfg: dict[str, Any]) -> list[str]:
    """Per-layer kinds: GPT-Neo's ``attention_layers`` or expanded ``attention_types``, or the
    ``layer_types`` of newer decoders (Gemma 3: "sliding_attention" / "full_attention").

    ``attention_types = [[["global", "local"], 12]]`` means that pair repeated 12 times.
    """
    if cfg.get("layer_types"):
        return [_LAYER_TYPE_NAMES.get(str(k), str(k)) for k in cfg["layer_types"]]
    if cfg.get("attention_layers"):
        return [str(k) for k in cfg["attention_layers"]]
    kinds = [str(k) for pair, times in cfg.get("attention_types") or [] for _ in range(int(times)) for k in pair]
    if not kinds:
        raise ExplorerError("This config has neither attention_layers nor attention_types: cannot tell "
                            "which layers are local.")
    return kinds


def max_positions(variant: Variant, cfg: dict[str, object], part: str = "encoder") -> int | None:
    """Longest input the published model takes (None: relative positions, no hard limit).

    RoBERTa-style models keep rows of ``max_position_embeddings`` for their padding offset
    (:func:`explorer.architecture.modeltypes.position_offset`); encoder-decoders may limit each side apart.
    """
    if variant.model_type in RELATIVE_POSITION_TYPES:
        return None
    names = ("max_decoder_position_embeddings",) if part in ("decoder", "cross") else (
        "max_encoder_position_embeddings",)
    limit = _first(cfg, *names, "max_position_embeddings", "n_positions", "n_ctx")
    if limit is None:
        return None
    pad = cfg.get("pad_token_id")
    return int(limit) - position_offset(str(cfg.get("model_type")), pad if isinstance(pad, int) else 1)


def _bigbird_spec(cfg: dict[str, Any], seq_len: int, seed: int, d: int) -> tuple[str, PatternSpec]:
    if cfg.get("attention_type") == "original_full":
        return "full (attention_type original_full)", full(seq_len, d)
    b, r = int(cfg.get("block_size", 64)), int(cfg.get("num_random_blocks", 3))
    spec = block_sparse(seq_len, b, r, seed, d)
    return ("block-sparse" if effective_kind(spec) == "block-sparse" else "full (short-input fallback)"), spec


def self_attention_spec(attention: str, cfg: dict[str, Any], layer: int, seq_len: int,
                        global_positions: tuple[int, ...], seed: int, dilation: int) -> tuple[str, PatternSpec]:
    """Self-attention pattern of one layer of the encoder (or the only stack) and its label."""
    d = head_dim(cfg)
    if attention in _FULL_LABELS:
        return "full", full(seq_len, d)
    if attention == "causal":
        return "causal", causal(seq_len, d)
    if attention == "sliding-window+global":
        win = cfg.get("attention_window", 512)
        w = int(win[layer] if isinstance(win, list) else win)  # one window per layer
        return f"window {w}", sliding_window(seq_len, w, (0, *global_positions), dilation, d)
    if attention == "block-sparse":
        return _bigbird_spec(cfg, seq_len, seed, d)
    if attention == "local-global-alternating":
        kind = alternating_layers(cfg)[layer]
        if kind in _LOCAL_NAMES:
            w = int(_first(cfg, "window_size", "local_window", "sliding_window", "attention_window") or 256)
            return f"{kind} (window {w})", local_causal(seq_len, w, d)
        return f"{kind} (causal)", causal(seq_len, d)
    raise ExplorerError(f"No pattern is known for attention {shorten(attention)!r}: "
                        "update explorer/architecture/patterns/config.py.")
