"""How a variant knows where a token is, read from its anatomy card and config: the kind and its parameters.

Light (no numpy until a series is asked for): ``python -m explorer positions`` prints :meth:`Scheme.to_dict`.

>>> from explorer.architecture import catalog
>>> s = scheme_of(catalog.variant_config("gemma3-270m"), "gemma3-270m")
>>> s.kind, s.bases, s.rotary_dims, s.layout
('rotary', (('global', 1000000.0), ('local', 10000.0)), 256, 'half')
>>> t5 = scheme_of(catalog.variant_config("t5-small"), "t5-small")
>>> t5.kind, t5.buckets, t5.max_distance, t5.stacks
('relative-buckets', 32, 128, ('encoder', 'decoder'))
>>> [int(b) for b in by_distance(t5, 2)["series"]["bucket (encoder)"]]
[2, 1, 0, 17, 18]
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.architecture import anatomy
from explorer.core.errors import ExplorerError

__all__ = ["KINDS", "MAX_DISTANCE", "ROTARY_LAYOUT", "SINUSOID_STYLE", "Scheme", "by_distance", "scheme_of"]

KINDS = ("learned-absolute", "sinusoidal", "relative-buckets", "disentangled", "rotary", "none")
SINUSOID_STYLE = {"m2m_100": "tensor2tensor", "ctrl": "halves"}  # the rest: Vaswani's interleaved table
ROTARY_LAYOUT = {"gptj": "pairs"}  # the rest rotate halves (transformers' rotate_half)
MAX_DISTANCE = 16_384  # the longest series the CLI prints (one number per distance on each side)
_EXPLAINED = {
    "learned-absolute": "a learned vector per position, added to the token embedding once, at the input",
    "sinusoidal": "a fixed table of sines and cosines, added to the token embedding once, at the input",
    "relative-buckets": "a learned bias per bucket of relative distance and head, added to every score",
    "disentangled": "relative-position embeddings that attend to content and are attended by it in every layer",
    "rotary": "queries and keys turned by an angle proportional to their position, so that q . k depends on the "
              "distance only",
    "none": "no position information: the model sees a bag of tokens (a decoder's causal mask still orders it)",
}


@dataclass(frozen=True)
class Scheme:
    """A variant's positions: the card's kind and the config's numbers."""

    model: str
    label: str
    model_type: str
    kind: str
    stacks: tuple[str, ...]  # the stacks that carry positions ("encoder", "decoder")
    width: int  # d_model: the table's width for absolute positions
    heads: int
    head_width: int
    max_positions: int | None
    offset: int = 0  # rows of a table never used for tokens (RoBERTa's and M2M-100's padding_idx + 1)
    bases: tuple[tuple[str, float], ...] = ()
    rotary_dims: int | None = None
    layout: str | None = None  # rotary pairs: "half" or "pairs"
    buckets: int | None = None
    max_distance: int | None = None
    position_buckets: int | None = None
    style: str | None = None  # sinusoid table: "interleaved", "halves" or "tensor2tensor"
    layer_kinds: tuple[str, ...] = ()  # of the main stack: which rotary base each layer uses
    module: str | None = None  # the module holding it (the card's path), None for a formula
    notes: tuple[str, ...] = ()

    @property
    def explained(self) -> str:
        return _EXPLAINED.get(self.kind, self.kind)

    def base_of(self, layer_kind: str) -> float:
        """The rotary base a layer of ``layer_kind`` uses ("local", "global"; one base for all otherwise)."""
        bases = dict(self.bases)
        return bases.get(layer_kind, bases.get("all", next(iter(bases.values()), 10_000.0)))

    def to_dict(self) -> dict[str, object]:
        """The CLI's JSON: ``{"model", "kind", ...}`` with the kind's parameters."""
        out: dict[str, object] = {"model": self.model, "kind": self.kind, "label": self.label,
                                  "model_type": self.model_type, "explained": self.explained,
                                  "stacks": list(self.stacks), "max_positions": self.max_positions}
        by_kind: dict[str, dict[str, object]] = {
            "learned-absolute": {"rows": self.max_positions, "width": self.width, "offset": self.offset},
            "sinusoidal": {"width": self.width, "offset": self.offset, "style": self.style},
            "relative-buckets": {"buckets": self.buckets, "max_distance": self.max_distance, "heads": self.heads},
            "disentangled": {"position_buckets": self.position_buckets, "max_relative_positions": self.max_distance},
            "rotary": {"bases": dict(self.bases), "rotary_dims": self.rotary_dims, "head_width": self.head_width,
                       "layout": self.layout},
        }
        return {**out, **by_kind.get(self.kind, {}), "module": self.module, "notes": list(self.notes)}


def scheme_of(config: object, name: str = "") -> Scheme:
    """The positions of ``config`` (a config.json dict or a transformers config) from its anatomy card."""
    numbers = anatomy.resolved(config)
    card, p, main = numbers.card, numbers.positions, numbers.main
    stacks = tuple(s.name for s in card.stacks if s.positions.kind != "none")
    kind = p.kind
    return Scheme(
        name or card.model_type, card.label, card.model_type, kind, stacks, main.d_model, main.heads,
        main.head_width, p.max_positions, p.offset + (2 if card.model_type == "m2m_100" else 0), p.bases,
        p.rotary_dims if kind == "rotary" else None,
        ROTARY_LAYOUT.get(card.model_type, "half") if kind == "rotary" else None,
        p.buckets, p.max_distance, p.position_buckets,
        SINUSOID_STYLE.get(card.model_type, "interleaved") if kind == "sinusoidal" else None,
        main.layer_kinds, card.main.positions.module, tuple(n for n in card.notes if "position" in n.lower()))


def by_distance(scheme: Scheme, distance_max: int = 128) -> dict[str, object]:
    """What the kind does at each distance from ``-distance_max`` to ``distance_max``: T5's bucket per direction,
    DeBERTa's bucket, the sinusoid dot product, the rotary score per base. Learned tables need their weights
    (:mod:`explorer.internals.positions`): none here."""
    from explorer.architecture.positions import formulas as f

    if isinstance(distance_max, bool) or not isinstance(distance_max, int) or not 1 <= distance_max <= MAX_DISTANCE:
        raise ExplorerError(f"The distance must be a whole number from 1 to {MAX_DISTANCE:,} (got {distance_max!r}).")
    import numpy as np

    d = np.arange(-distance_max, distance_max + 1)
    series: dict[str, list[float]] = {}
    if scheme.kind == "relative-buckets" and scheme.buckets and scheme.max_distance:
        for stack, both in (("encoder", True), ("decoder", False)):
            if stack in scheme.stacks:
                series[f"bucket ({stack})"] = f.t5_bucket(d, both, scheme.buckets, scheme.max_distance).tolist()
    elif scheme.kind == "disentangled":
        series["bucket"] = f.deberta_bucket(d, scheme.position_buckets or 0, scheme.max_distance or 512).tolist()
    elif scheme.kind == "sinusoidal" and scheme.style:
        series["dot / dot at 0"] = (f.sinusoid_dot(d, scheme.width, scheme.style) / (scheme.width // 2)).tolist()
    elif scheme.kind == "rotary":
        for kind, base in scheme.bases:
            series[f"score, base {base:,.0f} ({kind})"] = f.rope_score(d, scheme.rotary_dims or scheme.head_width,
                                                                      base).tolist()
    key = "key - query" if scheme.kind == "relative-buckets" else "query - key"
    return {"distances": d.tolist(), "distance": key, "series": series}
