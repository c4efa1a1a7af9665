"""Anatomy cards: one per model type, how its forward pass is built and where each part lives (torch-free data).

:func:`card_of` finds a model type's card (an unknown type is refused in words, naming the known ones);
:func:`resolved` adds a config's numbers (heads, key/value heads, windows, bases). The hook points of
:mod:`explorer.internals.sites` and the step-through of :mod:`explorer.internals.forward` read them.

>>> card_of("bert").norms.placement, card_of({"model_type": "gpt2"}).label
('post', 'GPT-2')
>>> resolved({"model_type": "t5", "d_model": 512, "num_heads": 8, "d_kv": 64, "num_layers": 6,
...           "relative_attention_num_buckets": 32}).positions.buckets
32
"""

from __future__ import annotations

from collections.abc import Mapping

from explorer.architecture.anatomy.card import Card
from explorer.architecture.anatomy.cards import CARDS
from explorer.architecture.anatomy.resolved import PositionNumbers, Resolved, StackShape, resolve
from explorer.core.errors import ExplorerError, shorten

__all__ = ["CARDS", "KNOWN", "Card", "PositionNumbers", "Resolved", "StackShape", "card_of", "resolved"]

KNOWN: tuple[str, ...] = tuple(sorted(CARDS))


def _model_type(source: object) -> str:
    if isinstance(source, str):
        return source
    value = source.get("model_type") if isinstance(source, Mapping) else getattr(source, "model_type", None)
    return str(value or "")


def card_of(source: object) -> Card:
    """The card of a model type, given as a name, a config or a config.json dict."""
    model_type = _model_type(source)
    if model_type in CARDS:
        return CARDS[model_type]
    shown = repr(shorten(model_type)) if model_type else "(none named)"
    raise ExplorerError(f"The explorer has no anatomy card for model type {shown}: it knows {', '.join(KNOWN)}. "
                        "Pick a catalog variant or a checkpoint of one of these types.")


def resolved(config: object, card: Card | None = None) -> Resolved:
    """``config``'s card (or ``card``) with its numbers."""
    return resolve(card or card_of(config), config)
