"""A card's numbers for one config: layer and head counts, key/value heads, windows per layer, position bases.

``config`` is a transformers config or a config.json dict (torch-free: only fields are read).

>>> from explorer.architecture.anatomy.cards import CARDS
>>> gemma = {"model_type": "gemma3_text", "hidden_size": 640, "num_hidden_layers": 3, "num_attention_heads": 4,
...          "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 2048, "sliding_window": 512,
...          "layer_types": ["sliding_attention", "sliding_attention", "full_attention"], "query_pre_attn_scalar": 256,
...          "rope_parameters": {"sliding_attention": {"rope_theta": 10000.0},
...                              "full_attention": {"rope_theta": 1000000.0}}}
>>> r = resolve(CARDS["gemma3_text"], gemma)
>>> s = r.stacks[0]
>>> s.layers, s.heads, s.kv_heads, s.grouping, s.layer_kinds, s.windows, r.attention_scale
(3, 4, 1, 'MQA', ('local', 'local', 'global'), (512, 512, None), 0.0625)
>>> r.positions.bases
(('global', 1000000.0), ('local', 10000.0))
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from explorer.architecture import modeltypes
from explorer.architecture.anatomy.card import Card, Stack

__all__ = ["PositionNumbers", "Resolved", "StackShape", "resolve"]

GEMMA_LAYER_KINDS = {"sliding_attention": "local", "full_attention": "global"}
DEFAULT_ROPE_BASE = 10000.0  # GPT-J's, fixed in its code
T5_MAX_DISTANCE = 128  # T5's relative_attention_max_distance where a config leaves it out


@dataclass(frozen=True)
class StackShape:
    """One stack's sizes. ``layer_kinds``: per layer, "full", "causal", "local", "global", "sliding" or
    "block-sparse"; ``windows``: the tokens a layer's window spans (None: the whole context)."""

    name: str
    layers: int
    heads: int
    kv_heads: int
    head_width: int
    d_model: int
    d_ff: int | None
    layer_kinds: tuple[str, ...]
    windows: tuple[int | None, ...]

    @property
    def grouping(self) -> str:
        """MHA (a key/value head per query head), MQA (one for all) or GQA (one per group)."""
        if self.kv_heads == self.heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"

    def kv_head_of(self, head: int) -> int:
        """The key/value head query head ``head`` reads."""
        return head // max(1, self.heads // max(1, self.kv_heads))


@dataclass(frozen=True)
class PositionNumbers:
    kind: str
    max_positions: int | None = None
    offset: int = 0
    bases: tuple[tuple[str, float], ...] = ()  # rotary base per layer kind ("global", "local" or "all")
    rotary_dims: int | None = None
    buckets: int | None = None
    max_distance: int | None = None
    position_buckets: int | None = None


@dataclass(frozen=True)
class Resolved:
    """A card with the numbers of one config."""

    card: Card
    stacks: tuple[StackShape, ...]
    positions: PositionNumbers
    mlp_kind: str
    activation: str
    attention_scale: float  # what q.k is multiplied by (layer 0's: GPT-2 can divide by the layer's index too)
    norm_eps: float | None
    embed_scale: float | None
    tied: bool
    final_softcap: float | None
    attn_softcap: float | None
    logits_rescale: float | None
    stacked_mlps: int = 1  # MobileBERT's num_feedforward_networks FFNs one after another
    bottleneck: int | None = None  # MobileBERT's true_hidden_size: the width inside each layer
    block_sparse: tuple[int, int] | None = None  # BigBird's (block_size, num_random_blocks)

    def stack(self, name: str) -> StackShape:
        return next(s for s in self.stacks if s.name == name)

    @property
    def main(self) -> StackShape:
        return self.stacks[-1]

    def to_dict(self) -> dict[str, object]:
        """The card's data, each stack with its sizes beside its paths, and the numbers of the config."""
        numbers: dict[str, object] = {k: v for k, v in asdict(self).items() if k not in ("card", "stacks")}
        numbers["positions"] = {**asdict(self.positions), "bases": [list(b) for b in self.positions.bases]}
        numbers["block_sparse"] = list(self.block_sparse) if self.block_sparse else None
        card = self.card.to_dict()
        paths = card.pop("stacks")
        assert isinstance(paths, list)
        sizes = [{**asdict(s), "layer_kinds": list(s.layer_kinds), "windows": list(s.windows),
                  "grouping": s.grouping} for s in self.stacks]
        return {**card, "stacks": [{**p, **n} for p, n in zip(paths, sizes, strict=True)], **numbers}


def _get(cfg: object, name: str) -> object:
    return cfg.get(name) if isinstance(cfg, Mapping) else getattr(cfg, name, None)


def _number(cfg: object, *names: str) -> float | None:
    for name in names:
        value = _get(cfg, name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def _part(cfg: object, name: str) -> object:
    """The config holding one stack's fields: a composite encoder-decoder's sub-config, else the config itself."""
    if _get(cfg, "model_type") == "encoder-decoder":
        sub = _get(cfg, name)
        return sub if sub is not None else cfg
    return cfg


def _heads(card: Card, stack: Stack, sub: object) -> int:
    if card.family == "encoder-decoder" and stack.name == "decoder":
        return modeltypes.config_int(sub, "decoder_attention_heads", *modeltypes.HEAD_FIELDS) or 0
    return modeltypes.num_heads(sub) or 0


def _width(card: Card, stack: Stack, sub: object, d_model: int) -> int | None:
    names = (card.mlp.decoder_width_fields if stack.name == "decoder" else ()) + card.mlp.width_fields
    found = modeltypes.config_int(sub, *names) if names else None
    if found:
        return found
    return card.mlp.width_ratio * d_model if card.mlp.width_ratio else None


def _expand(pattern: object) -> list[str]:
    """GPT-Neo's attention_types ([[["global", "local"], 12]]) as one kind per layer."""
    out: list[str] = []
    for item in pattern if isinstance(pattern, list) else []:
        if isinstance(item, list) and len(item) == 2 and isinstance(item[1], int):
            out += [str(k) for k in item[0]] * item[1]
    return out


def _local_global(sub: object, layers: int) -> tuple[list[str], int | None]:
    """(kind of each layer, window) of Gemma's layer_types or GPT-Neo's attention_layers."""
    types = _get(sub, "layer_types")
    if isinstance(types, list | tuple) and types:
        return [GEMMA_LAYER_KINDS.get(str(t), str(t)) for t in types], modeltypes.config_int(sub, "sliding_window")
    kinds = _get(sub, "attention_layers") or _expand(_get(sub, "attention_types"))
    if isinstance(kinds, list | tuple) and kinds:
        return [str(k) for k in kinds], modeltypes.config_int(sub, "window_size")
    pattern = modeltypes.config_int(sub, "sliding_window_pattern", "_sliding_window_pattern") or 1
    kinds = ["global" if (i + 1) % pattern == 0 else "local" for i in range(layers)]
    return kinds, modeltypes.config_int(sub, "sliding_window")


def _pattern(card: Card, stack: Stack, sub: object, layers: int) -> tuple[tuple[str, ...], tuple[int | None, ...]]:
    kind = "causal" if card.family == "encoder-decoder" and stack.name == "decoder" else card.attention.kind
    if kind == "local-global":
        kinds, window = _local_global(sub, layers)
        kinds = (kinds + kinds[-1:] * layers)[:layers]
        return tuple(kinds), tuple(window if k == "local" else None for k in kinds)
    if kind == "sliding-window":
        spans = _get(sub, "attention_window")
        per = list(spans) if isinstance(spans, list | tuple) else [spans] * layers
        return ("sliding",) * layers, tuple(int(w) if isinstance(w, int) else None for w in per[:layers])
    if kind == "block-sparse" and stack.name == "encoder":
        sparse = _get(sub, "attention_type") in (None, "block_sparse")
        return ("block-sparse" if sparse else "full",) * layers, (None,) * layers
    return (kind if kind in ("full", "causal") else "full",) * layers, (None,) * layers


def _stack_shape(card: Card, stack: Stack, cfg: object) -> StackShape:
    sub = _part(cfg, stack.name)
    layers = modeltypes.num_layers(cfg, stack.name) or 0
    heads = _heads(card, stack, sub)
    d_model = modeltypes.config_int(sub, *modeltypes.HIDDEN_FIELDS) or 0
    stated = modeltypes.head_width(sub) if heads == modeltypes.num_heads(sub) else None
    width = stated or (d_model // heads if heads else 0)
    kv = modeltypes.config_int(sub, "num_key_value_heads") or heads
    kinds, windows = _pattern(card, stack, sub, layers)
    return StackShape(stack.name, layers, heads, kv, width, d_model, _width(card, stack, sub, d_model), kinds, windows)


def _rope_bases(sub: object) -> tuple[tuple[str, float], ...]:
    params = _get(sub, "rope_parameters")
    if isinstance(params, Mapping) and all(isinstance(v, Mapping) for v in params.values()) and params:
        return tuple(sorted((GEMMA_LAYER_KINDS.get(str(k), str(k)), float(v.get("rope_theta", DEFAULT_ROPE_BASE)))
                            for k, v in params.items() if isinstance(v, Mapping)))
    if isinstance(params, Mapping) and isinstance(params.get("rope_theta"), int | float):
        return (("all", float(params["rope_theta"])),)
    glob, local = _number(sub, "rope_theta"), _number(sub, "rope_local_base_freq")
    if glob is not None and local is not None:
        return (("global", glob), ("local", local))
    return (("all", glob if glob is not None else DEFAULT_ROPE_BASE),)


def _positions(card: Card, cfg: object, width: int) -> PositionNumbers:
    sub = _part(cfg, card.main.name)
    kind = card.main.positions.kind
    model_type = str(_get(sub, "model_type") or card.model_type)
    longest = modeltypes.config_int(sub, "max_position_embeddings", "n_positions")
    if kind == "learned-absolute":
        pad = _get(sub, "pad_token_id")
        offset = modeltypes.position_offset(model_type, pad if isinstance(pad, int) else 1)
        return PositionNumbers(kind, longest, offset)
    if kind == "relative-buckets":
        return PositionNumbers(kind, buckets=modeltypes.config_int(sub, "relative_attention_num_buckets"),
                               max_distance=modeltypes.config_int(sub, "relative_attention_max_distance")
                               or T5_MAX_DISTANCE)
    if kind == "disentangled":
        span = modeltypes.config_int(sub, "max_relative_positions") or -1
        buckets = modeltypes.config_int(sub, "position_buckets") or -1
        return PositionNumbers(kind, longest, max_distance=span if span > 0 else longest,
                               position_buckets=buckets if buckets > 0 else None)
    if kind == "rotary":
        return PositionNumbers(kind, longest, bases=_rope_bases(sub),
                               rotary_dims=modeltypes.config_int(sub, "rotary_dim") or width)
    return PositionNumbers(kind, longest)


def _activation(card: Card, cfg: object) -> str:
    for name in card.mlp.activation_fields:
        value = _get(cfg, name)
        if isinstance(value, bool):  # XLM's gelu_activation: GELU or ReLU
            return "gelu" if value else "relu"
        if isinstance(value, str) and value:
            gated = value.removeprefix("gated-")
            return "gelu_new" if gated != value and gated == "gelu" else gated  # T5's gated-gelu is gelu_new
    return card.mlp.activation_default


def _mlp_kind(card: Card, cfg: object) -> str:
    gated = bool(_get(cfg, "is_gated_act")) or str(_get(cfg, "feed_forward_proj") or "").startswith("gated")
    return "gated" if gated else card.mlp.kind


def _scale(card: Card, cfg: object, width: int) -> float:
    kind = card.attention.scale
    if kind == "none" or _get(cfg, "scale_attn_weights") is False:
        return 1.0
    if kind == "query-pre-attn-scalar":
        return float(_number(cfg, "query_pre_attn_scalar") or width) ** -0.5
    if kind == "inverse-sqrt-head-terms":
        terms = _get(cfg, "pos_att_type") or []
        listed = terms.split("|") if isinstance(terms, str) else terms if isinstance(terms, list | tuple) else []
        count = len(listed)
        return float(width * (1 + count)) ** -0.5
    return float(width) ** -0.5 if width else 1.0


def _embed_scale(card: Card, cfg: object, d_model: int) -> float | None:
    scale = card.main.embeddings.scale
    if scale == "sqrt-d" or scale == "config" and bool(_get(cfg, "scale_embedding")):
        return math.sqrt(d_model)
    return None


def _rescale(card: Card, cfg: object, d_model: int) -> float | None:
    if not card.readout.rescale:
        return None
    scaled = _get(cfg, "scale_decoder_outputs")
    on = bool(scaled) if isinstance(scaled, bool) else _get(cfg, "tie_word_embeddings") is not False
    return d_model ** -0.5 if on and d_model else None


def _extras(card: Card, sub: object) -> tuple[int, int | None, tuple[int, int] | None]:
    """MobileBERT's stacked FFNs and bottleneck, BigBird's blocks: what only some cards have."""
    stacked = modeltypes.config_int(sub, card.mlp.stacked_field) if card.mlp.stacked_field else None
    bottleneck = modeltypes.config_int(sub, "true_hidden_size") if _get(sub, "use_bottleneck") else None
    blocks = modeltypes.config_int(sub, "block_size"), modeltypes.config_int(sub, "num_random_blocks")
    sparse = (blocks[0], blocks[1]) if card.attention.kind == "block-sparse" and blocks[0] and blocks[1] else None
    return stacked or 1, bottleneck, sparse


def resolve(card: Card, cfg: object) -> Resolved:
    """``card`` with the numbers of ``cfg``."""
    stacks = tuple(_stack_shape(card, s, cfg) for s in card.stacks)
    main, sub = stacks[-1], _part(cfg, card.main.name)
    softcap = _number(sub, card.readout.softcap_field) if card.readout.softcap_field else None
    return Resolved(card, stacks, _positions(card, cfg, main.head_width), _mlp_kind(card, sub), _activation(card, sub),
                    _scale(card, sub, main.head_width),
                    _number(sub, "layer_norm_eps", "layer_norm_epsilon", "rms_norm_eps"),
                    _embed_scale(card, sub, main.d_model), _get(sub, "tie_word_embeddings") is not False,
                    softcap, _number(sub, "attn_logit_softcapping"), _rescale(card, sub, main.d_model),
                    *_extras(card, _part(cfg, card.stacks[0].name)))
