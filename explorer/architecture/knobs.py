"""The architecture knobs a page offers: which config setting, its label, and where its start value comes from.

A knob names a generic setting of :data:`explorer.architecture.build.KNOBS` (which config attributes hold it);
its start value is read from :func:`explorer.architecture.compare.config_summary` of the variant. A start of
0 means "keep the configuration's value" (a setting the variant does not have, such as ALBERT's embedding size
on BERT). Only the knobs whose value the user changed become overrides.

>>> ks = knobs({"layers": 12, "hidden": 768, "heads": 12, "ffn": 3072, "vocab": 30522})
>>> [(k.name, k.start) for k in ks][:2], ks[-1].start
([('num_hidden_layers', 12), ('hidden_size', 768)], 0)
>>> overrides(ks, [12, 768, 6, 3072, 30522, 0])
{'num_attention_heads': 6}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["KNOB_FIELDS", "Knob", "knobs", "overrides"]

# (build.KNOBS setting, label, config_summary field or None when a summary has no such field)
KNOB_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("num_hidden_layers", "Layers", "layers"),
    ("hidden_size", "Hidden size", "hidden"),
    ("num_attention_heads", "Heads", "heads"),
    ("intermediate_size", "FFN size", "ffn"),
    ("vocab_size", "Vocabulary", "vocab"),
    ("embedding_size", "Embedding size", None),  # ALBERT's factorised embedding: the summary falls back to hidden
)


@dataclass(frozen=True)
class Knob:
    """One number a user may change: ``name`` (a ``build.KNOBS`` setting), ``label``, ``start`` (0: keep the
    config's)."""

    name: str
    label: str
    start: int


def knobs(summary: Mapping[str, object]) -> tuple[Knob, ...]:
    """The page's knobs with their start values from a ``config_summary`` (empty for an uploaded config)."""
    out = []
    for name, label, field in KNOB_FIELDS:
        value = summary.get(field) if field else None
        out.append(Knob(name, label, value if isinstance(value, int) and not isinstance(value, bool) else 0))
    return tuple(out)


def overrides(items: Sequence[Knob], values: Sequence[int]) -> dict[str, int]:
    """The settings whose value differs from its start: what ``build.apply_overrides`` should change."""
    return {k.name: int(v) for k, v in zip(items, values, strict=True) if int(v) != k.start}
