"""Patterns of catalogued variants: the pattern of one layer (and part) at one length, and cost curves.

A variant's config comes from the catalog; ``part`` picks the attention of an encoder-decoder
(``encoder``, ``decoder`` or ``cross``); single-stack models have only ``self``.

>>> vp = pattern_for_variant("bigbird", 4096)
>>> vp.part, vp.layer_kind, vp.stats.effective_kind
('self', 'block-sparse', 'block-sparse')
>>> pattern_for_variant("t5-base", 300, part="cross", dec_len=40).stats.nnz
12000
>>> diagram_plan(("gpt2", "t5-base"), ("encoder", "cross"), layer=20)
(('gpt2', 'auto', 11), ('t5-base', 'encoder', 11), ('t5-base', 'cross', 0))
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.architecture import catalog
from explorer.architecture.modeltypes import num_layers
from explorer.architecture.patterns.config import (
    KNOWN_ATTENTION,
    alternating_layers,
    head_dim,
    max_positions,
    self_attention_spec,
)
from explorer.architecture.patterns.costs import CostCurve, PatternStats, cost_curve, default_lengths, pattern_stats
from explorer.architecture.patterns.kinds import PatternSpec, causal, check_len, cross
from explorer.core.errors import ExplorerError, shorten

__all__ = ["ENCODER_DECODER_PARTS", "PARTS", "VariantPattern", "diagram_plan", "layer_count",
           "pattern_for_variant", "supported_variants", "variant_cost_curve", "variant_layers"]

PARTS = ("auto", "encoder", "decoder", "cross")
ENCODER_DECODER_PARTS = ("encoder", "decoder", "cross")


def _resolve_part(variant: catalog.Variant, part: str) -> str:
    """``self`` for single-stack models; encoder/decoder/cross for encoder-decoders."""
    if part not in PARTS:
        raise ExplorerError(f"Unknown part {shorten(part)!r}; choose one of {', '.join(PARTS)}.")
    if variant.family == "encoder-decoder":
        return "encoder" if part == "auto" else part
    if part in ("auto", variant.family):
        return "self"
    raise ExplorerError(f"{variant.name} is a {variant.family} model: it has no {part} attention.")


def layer_count(variant: catalog.Variant, cfg: dict[str, object], part: str) -> int:
    """Number of layers whose pattern can be picked for this part (at least 1: a config that names no
    count still has one layer to draw)."""
    if part in ("decoder", "cross"):
        return num_layers(cfg, "decoder") or 1
    if variant.attention == "local-global-alternating":
        return len(alternating_layers(cfg))
    window = cfg.get("attention_window")
    if variant.attention == "sliding-window+global" and isinstance(window, list):
        return len(window)
    return num_layers(cfg, "encoder") or 1


@dataclass(frozen=True)
class VariantPattern:
    """The pattern of one layer of one catalogued variant, with its closed-form costs."""

    key: str
    name: str
    attention: str
    part: str  # self | encoder | decoder | cross
    layer: int
    n_layers: int
    layer_kind: str
    max_positions: int | None
    beyond_max_positions: bool
    spec: PatternSpec
    stats: PatternStats

    def to_dict(self) -> dict[str, object]:
        """Flat JSON: the stats at top level (kind, nnz, density, score_memory_bytes ...)."""
        head = {k: getattr(self, k) for k in ("key", "name", "attention", "part", "layer", "n_layers",
                                                "layer_kind", "max_positions", "beyond_max_positions")}
        return {**head, **self.stats.to_dict(), "spec": self.spec.to_dict()}


def _variant_and_config(key: str) -> tuple[catalog.Variant, dict[str, object]]:
    return catalog.get_variant(key), catalog.variant_config(key)


def _check_limit(variant: catalog.Variant, limit: int | None, length: int, allow_beyond: bool) -> bool:
    beyond = limit is not None and length > limit
    if beyond and not allow_beyond:
        raise ExplorerError(f"{variant.name} takes at most {limit:,} tokens (max position embeddings); "
                            f"{length:,} is too long: pick a shorter --seq-len.")
    return beyond


def pattern_for_variant(
    key: str, seq_len: int, layer: int = 0, *, part: str = "auto", global_positions: tuple[int, ...] = (),
    seed: int = 0, dilation: int = 1, dec_len: int | None = None, allow_beyond_max: bool = False,
) -> VariantPattern:
    """The attention pattern of ``layer`` of variant ``key`` for ``seq_len`` tokens.

    ``global_positions``: Longformer's extra global tokens ([CLS] = 0 is always global);
    ``seed``: BigBird's random blocks; ``dec_len``: decoder length of encoder-decoders
    (default ``seq_len``). Longer than the model's max positions raises unless ``allow_beyond_max``.
    """
    variant, cfg = _variant_and_config(key)
    seq_len = check_len("Sequence length", seq_len)
    dec_len = seq_len if dec_len is None else check_len("Decoder length", dec_len)
    part = _resolve_part(variant, part)
    n = layer_count(variant, cfg, part)
    if not 0 <= layer < n:
        raise ExplorerError(f"{variant.name} has layers 0..{n - 1} ({part}); layer {layer} does not exist.")
    limit = max_positions(variant, cfg, part)
    length = seq_len if part in ("self", "encoder") else dec_len
    beyond = _check_limit(variant, limit, length, allow_beyond_max)
    if part == "decoder":
        label, spec = "causal", causal(dec_len, head_dim(cfg))
    elif part == "cross":
        label, spec = "cross", cross(dec_len, seq_len, head_dim(cfg))
    else:
        label, spec = self_attention_spec(variant.attention, cfg, layer, seq_len, tuple(global_positions), seed,
                                          dilation)
    return VariantPattern(key, variant.name, variant.attention, part, layer, n, label, limit, beyond,
                          spec, pattern_stats(spec))


def variant_cost_curve(
    key: str, lengths: tuple[int, ...] | None = None, layer: int | None = None, *, part: str = "auto",
    global_positions: tuple[int, ...] = (), seed: int = 0, dilation: int = 1,
) -> CostCurve:
    """Cost against length for ``key``: one ``layer``, or the mean over all layers (None)."""
    lengths = lengths or default_lengths()
    variant, cfg = _variant_and_config(key)
    part_ = _resolve_part(variant, part)
    layers = range(layer_count(variant, cfg, part_)) if layer is None else [layer]
    top = max(lengths)  # build at the longest length so every global position is valid
    specs = [pattern_for_variant(key, top, i, part=part, global_positions=global_positions, seed=seed,
                                 dilation=dilation, allow_beyond_max=True).spec for i in layers]
    label = variant.name if part_ in ("self", "encoder") else f"{variant.name} ({part_})"
    return cost_curve(specs, tuple(lengths), label, max_positions(variant, cfg, part_))


def supported_variants() -> dict[str, catalog.Variant]:
    """Catalogued variants whose attention pattern this package can draw, by key."""
    return {k: v for k, v in catalog.load_catalog().items() if v.attention in KNOWN_ATTENTION}



def variant_layers(key: str, part: str = "auto") -> int:
    """Number of layers whose pattern can be picked for ``part`` of variant ``key``."""
    variant, cfg = _variant_and_config(key)
    return layer_count(variant, cfg, _resolve_part(variant, part))


def _parts_to_draw(key: str, wanted: tuple[str, ...]) -> tuple[str, ...]:
    """The ``wanted`` parts of an encoder-decoder (encoder when none); ``auto`` for one stack."""
    if _variant_and_config(key)[0].family != "encoder-decoder":
        return ("auto",)
    return tuple(p for p in ENCODER_DECODER_PARTS if p in wanted) or ("encoder",)


def diagram_plan(keys: tuple[str, ...], wanted_parts: tuple[str, ...] = ENCODER_DECODER_PARTS,
                 layer: int = 0) -> tuple[tuple[str, str, int], ...]:
    """``(key, part, layer)`` of every diagram when ``layer`` is asked of several variants at once.

    Encoder-decoders get one diagram per wanted part. The layer is clipped to each variant's last
    one; decoder and cross parts show layer 0 (every layer has the same causal / full pattern).
    """
    plan = []
    for key in keys:
        for part in _parts_to_draw(key, wanted_parts):
            shown = max(0, min(int(layer), variant_layers(key, part) - 1)) if part in ("auto", "encoder") else 0
            plan.append((key, part, shown))
    return tuple(plan)
