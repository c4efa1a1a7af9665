"""The key/value cache a variant keeps while it generates: bytes per layer, per token and per dtype, from its config.

Each layer keeps a key and a value per cached position for each of its key/value heads: ``2 x kv_heads x
head_width x dtype bytes`` a token. MHA has a key/value head per query head, MQA one for all (Gemma 3 270M), GQA one
per group (the anatomy card's ``kv_heads``). A layer that attends within a window (Gemma's local layers, 512
tokens) needs only the last ``window - 1`` positions once the next token comes (it attends to itself and those):
that is what transformers' ``DynamicCache`` keeps between steps (``DynamicSlidingWindowLayer``), so the figures
here are its tensors' bytes. Its ``StaticCache`` allocates ``window`` slots on those layers up front
(``static_bytes``). GPT-Neo's local layers mask a window but transformers caches every position for them (its
config names no ``sliding_window``): counted as the cache really holds them, with a note.

Torch-free: configs are read as dicts or objects (:mod:`explorer.architecture.anatomy`); ``capacity`` plans
prompt lengths with :func:`bytes_per_token`.

>>> gemma = {"model_type": "gemma3_text", "hidden_size": 640, "num_hidden_layers": 3, "num_attention_heads": 4,
...          "num_key_value_heads": 1, "head_dim": 256, "sliding_window": 512, "max_position_embeddings": 32768,
...          "layer_types": ["sliding_attention", "sliding_attention", "full_attention"]}
>>> p = plan(gemma, 2048, "bfloat16", "gemma")
>>> [(l.kind, l.tokens, l.bytes) for l in p.layers]
[('local', 511, 523264), ('local', 511, 523264), ('global', 2048, 2097152)]
>>> p.bytes, p.bytes_per_token, p.grouping, bytes_per_token(gemma, 2)
(3143680, 3072, 'MQA', 3072)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from explorer.architecture import anatomy, modeltypes
from explorer.core.errors import ExplorerError, shorten

__all__ = ["DTYPE_BYTES", "MAX_CONTEXT", "CacheCurve", "CachePlan", "LayerCache", "bytes_per_token", "curve",
           "dtype_of", "lengths_up_to", "plan"]

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "int8": 1}  # int8: a quantized cache
_ALIASES = {"fp32": "float32", "float": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}
MAX_CONTEXT = 1 << 24  # 16M tokens: beyond any model here; a larger number is a typo
UNBOUNDED_CHART = 32_768  # how far the chart goes for a model whose positions set no limit (T5)
_CACHED_WINDOW = ("gemma3_text",)  # types whose config names sliding_window per layer (transformers drops old keys)


@dataclass(frozen=True)
class LayerCache:
    """One layer's cache at a context length: ``tokens`` positions of ``kv_heads`` keys and values."""

    layer: int
    kind: str  # the anatomy card's layer kind ("local", "global", "causal", "full", ...) or "cross"
    kv_heads: int
    head_width: int
    window: int | None  # the tokens it attends within (None: the whole context)
    tokens: int
    bytes: int
    stack: str = "decoder"

    @property
    def bytes_per_token(self) -> int:
        return self.bytes // self.tokens if self.tokens else 0

    def to_dict(self) -> dict[str, object]:
        return {"layer": self.layer, "kind": self.kind, "kv_heads": self.kv_heads, "head_width": self.head_width,
                "window": self.window, "bytes": self.bytes, "tokens": self.tokens, "stack": self.stack,
                "bytes_per_token": self.bytes_per_token}


@dataclass(frozen=True)
class CachePlan:
    """A model's whole cache at one context length and dtype."""

    model: str
    context: int
    dtype: str
    dtype_bytes: int
    layers: tuple[LayerCache, ...]
    heads: int
    kv_heads: int
    grouping: str  # MHA, MQA or GQA
    max_context: int | None  # the positions the model reads (None: its positions set no limit)
    static_bytes: int  # what transformers' StaticCache of ``context`` slots allocates
    notes: tuple[str, ...] = ()

    @property
    def bytes(self) -> int:
        return sum(layer.bytes for layer in self.layers)

    @property
    def bytes_per_token(self) -> int:
        """What one more token adds while every layer still keeps it (below any window): cross-attention's
        keys and values are the encoder's, computed once, and are left out."""
        return sum(2 * layer.kv_heads * layer.head_width * self.dtype_bytes for layer in self.layers
                   if layer.kind != "cross")

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "context": self.context, "dtype": self.dtype, "bytes": self.bytes,
                "bytes_per_token": self.bytes_per_token, "layers": [layer.to_dict() for layer in self.layers],
                "heads": self.heads, "kv_heads": self.kv_heads, "grouping": self.grouping,
                "max_context": self.max_context, "static_bytes": self.static_bytes, "notes": list(self.notes)}


@dataclass(frozen=True)
class CacheCurve:
    """A model's cache bytes at each of ``lengths`` (one dtype), for a chart."""

    model: str
    dtype: str
    lengths: tuple[int, ...]
    bytes: tuple[int, ...]
    max_context: int | None

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "dtype": self.dtype, "lengths": list(self.lengths), "bytes": list(self.bytes),
                "max_context": self.max_context}


def dtype_of(name: str) -> tuple[str, int]:
    """(canonical name, bytes) of a cache dtype: float32, bfloat16, float16 or int8 (fp32, bf16, fp16 too)."""
    key = _ALIASES.get(str(name).strip().lower(), str(name).strip().lower())
    if key not in DTYPE_BYTES:
        raise ExplorerError(f"Unknown cache dtype {shorten(str(name))!r}: use one of {', '.join(DTYPE_BYTES)}.")
    return key, DTYPE_BYTES[key]


def _get(cfg: object, name: str) -> object:
    return cfg.get(name) if isinstance(cfg, Mapping) else getattr(cfg, name, None)


def _text(config: object) -> object:
    """A multimodal wrapper's language model config (Gemma 3's text_config), else the config itself."""
    return _get(config, "text_config") or config


def _card(cfg: object) -> anatomy.Card | None:
    return anatomy.CARDS.get(str(_get(cfg, "model_type") or ""))


def _generic(cfg: object) -> anatomy.StackShape | None:
    """A config of a type without a card: every layer full, the usual field names."""
    layers, heads = modeltypes.num_layers(cfg), modeltypes.num_heads(cfg)
    kv = modeltypes.config_int(cfg, "num_key_value_heads") or heads
    width = modeltypes.head_width(cfg)
    if not (layers and heads and kv and width) or min(layers, heads, kv, width) <= 0:
        return None
    return anatomy.StackShape("decoder", layers, heads, kv, width, 0, None, ("full",) * layers, (None,) * layers)


def _self_stack(cfg: object) -> tuple[anatomy.StackShape | None, anatomy.Resolved | None]:
    """The stack whose self-attention is cached (an encoder-decoder's decoder, else the only one)."""
    card = _card(cfg)
    if card is None:
        return _generic(cfg), None
    numbers = anatomy.resolved(cfg, card)
    return numbers.main, numbers


def bytes_per_token(config: object, dtype_bytes: int = 4) -> int | None:
    """Bytes of cache one token adds on every layer: 2 (keys, values) x layers x KV heads x head width x dtype
    (what a prompt plan reserves; windows only ever lower it). None when the config names no sizes."""
    shape, _ = _self_stack(_text(config))
    if shape is None or min(shape.layers, shape.kv_heads, shape.head_width) <= 0:
        return None
    return 2 * shape.layers * shape.kv_heads * shape.head_width * int(dtype_bytes)


def _drops_old(cfg: object) -> bool:
    """Whether transformers' cache lets a windowed layer forget positions past its window."""
    return str(_get(cfg, "model_type") or "") in _CACHED_WINDOW or isinstance(_get(cfg, "layer_types"), list | tuple)


def _layers(shape: anatomy.StackShape, context: int, item: int, drops: bool) -> tuple[list[LayerCache], int]:
    """Each layer's cache at ``context`` tokens, and what a StaticCache of ``context`` slots would allocate."""
    out, static = [], 0
    for i, (kind, window) in enumerate(zip(shape.layer_kinds, shape.windows, strict=True)):
        kept = min(context, window - 1) if drops and window else context
        per = 2 * shape.kv_heads * shape.head_width * item
        out.append(LayerCache(i, kind, shape.kv_heads, shape.head_width, window, kept, per * kept, shape.name))
        static += per * (min(context, window) if drops and window else context)
    return out, static


def _cross(numbers: anatomy.Resolved, source: int, item: int) -> list[LayerCache]:
    """An encoder-decoder's cross-attention cache: the encoder's ``source`` tokens as keys and values, per layer."""
    dec = numbers.stack("decoder")
    return [LayerCache(i, "cross", dec.heads, dec.head_width, None, source, 2 * dec.heads * dec.head_width * item
                       * source, "decoder") for i in range(dec.layers)]


def _notes(cfg: object, numbers: anatomy.Resolved | None, shape: anatomy.StackShape, drops: bool,
           context: int) -> tuple[str, ...]:
    notes: list[str] = []
    if numbers is None:
        notes.append(f"No anatomy card for model type {shorten(str(_get(cfg, 'model_type') or '(none)'))!r}: every "
                     "layer is counted as full attention from the usual size fields.")
    elif numbers.card.family == "encoder":
        notes.append("An encoder reads the whole text at once and keeps no cache between calls: these are the keys "
                     "and values one forward pass over the context computes.")
    elif numbers.card.family == "encoder-decoder":
        notes.append("The decoder caches its own keys and values per generated token, and the encoder's keys and "
                     "values for cross-attention once (counted here for a source as long as the context).")
    if any(shape.windows) and not drops:
        notes.append("Its local layers mask a window, but transformers' cache keeps every position for them (the "
                     "config names no sliding_window): the bytes are those the cache holds.")
    longest = numbers.positions.max_positions if numbers else None
    if longest and context > longest:
        notes.append(f"{context:,} tokens is beyond the {longest:,} positions the model reads.")
    return tuple(notes)


def _check_context(context: int) -> int:
    if isinstance(context, bool) or not isinstance(context, int) or not 1 <= context <= MAX_CONTEXT:
        raise ExplorerError(f"The context must be a whole number of tokens from 1 to {MAX_CONTEXT:,} "
                            f"(got {shorten(str(context))}).")
    return context


def plan(config: object, context: int, dtype: str = "float32", name: str = "", source: int | None = None,
         ) -> CachePlan:
    """The cache of ``config`` (a config.json dict or a transformers config) after ``context`` tokens, in ``dtype``;
    an encoder-decoder's cross-attention over a source of ``source`` tokens (default: ``context``)."""
    context = _check_context(context)
    dtype, item = dtype_of(dtype)
    cfg = _text(config)
    shape, numbers = _self_stack(cfg)
    if shape is None or min(shape.layers, shape.kv_heads, shape.head_width) <= 0:
        raise ExplorerError(f"{shorten(name or 'This config')} names no layer, head or width sizes the cache could "
                            "be counted from: give a full config.json (num_hidden_layers, num_attention_heads, "
                            "hidden_size).")
    drops = _drops_old(cfg)
    layers, static = _layers(shape, context, item, drops)
    if numbers is not None and numbers.card.family == "encoder-decoder":
        cross = _cross(numbers, _check_context(source or context), item)
        layers, static = layers + cross, static + sum(c.bytes for c in cross)
    longest = numbers.positions.max_positions if numbers else modeltypes.max_input_tokens(cfg)
    return CachePlan(name, context, dtype, item, tuple(layers), shape.heads, shape.kv_heads, shape.grouping,
                     longest, static, _notes(cfg, numbers, shape, drops, context))


def lengths_up_to(longest: int | None, windows: Sequence[int | None] = (), start: int = 16) -> tuple[int, ...]:
    """Context lengths for a log-axis chart: powers of two and the halfway points between, the windows and their
    last cached length (where a windowed layer stops growing), and ``longest`` itself."""
    top = int(longest or UNBOUNDED_CHART)
    points = {top}
    n = start
    while n < top:
        points.update({n, int(n * 1.5)})
        n *= 2
    points.update(w for w in windows if w and w <= top)
    points.update(w - 1 for w in windows if w and 1 < w <= top)
    return tuple(sorted(p for p in points if 1 <= p <= top))


def curve(config: object, dtype: str = "float32", name: str = "", lengths: Sequence[int] | None = None,
          ) -> CacheCurve:
    """The cache's bytes at every length up to the model's limit (or at ``lengths``)."""
    first = plan(config, 1, dtype, name)
    windows = tuple({layer.window for layer in first.layers})
    chosen = tuple(lengths) if lengths is not None else lengths_up_to(first.max_context, windows)
    sizes = tuple(plan(config, n, dtype, name).bytes for n in chosen)
    return CacheCurve(name, first.dtype, chosen, sizes, first.max_context)
