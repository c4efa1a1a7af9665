"""What an ablation switches off: a head, a neuron, a layer's attention or MLP block, or a whole layer.

Spelled ``L.H`` (a head), ``L.N`` (a neuron), ``L.attn`` / ``L.mlp`` (a block) or ``L`` (a layer), layers, heads and
neurons counted from 0, and checked against the model's sizes before any work.

>>> parse("head", "3.1"), parse("block", "2.mlp").label, parse("layer", "4").site
(Component(kind='head', layer=3, index=1), 'layer 2 MLP', 'layer')
>>> parse("head", "3")
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: A head is written LAYER.HEAD, e.g. 3.1 (layer 3, head 1), not '3'.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from explorer.architecture.modeltypes import HEAD_FIELDS, config_int, num_heads, num_layers
from explorer.core.errors import ExplorerError, shorten
from explorer.internals.sites import Sites

__all__ = ["KINDS", "Component", "check", "check_config", "parse"]

# The MLP's width under each family's name (a config dict has only its own spelling).
FF_FIELDS = ("intermediate_size", "d_ff", "n_inner", "hidden_dim", "decoder_ffn_dim", "ffn_dim", "dff",
             "encoder_ffn_dim")

KINDS = ("head", "neuron", "block", "layer")
_SPELLING = {"head": ("LAYER.HEAD", "3.1 (layer 3, head 1)"),
             "neuron": ("LAYER.NEURON", "5.1023 (layer 5, neuron 1023)"),
             "block": ("LAYER.attn or LAYER.mlp", "2.mlp (layer 2's MLP)"), "layer": ("LAYER", "4")}
_PATTERN = {"head": r"(\d{1,4})\.(\d{1,5})", "neuron": r"(\d{1,4})\.(\d{1,7})", "block": r"(\d{1,4})\.(attn|mlp)",
            "layer": r"(\d{1,4})"}


@dataclass(frozen=True)
class Component:
    """One ablated part of a model: ``kind`` is head, neuron, attn, mlp or layer."""

    kind: str
    layer: int
    index: int | None = None  # the head or the neuron

    @property
    def site(self) -> str:
        """Where :mod:`explorer.interventions.traces` replaces it."""
        return {"head": "heads", "neuron": "neurons"}.get(self.kind, self.kind)

    @property
    def column(self) -> int | None:
        return self.index

    @property
    def label(self) -> str:
        return {"head": f"head {self.layer}.{self.index}", "neuron": f"neuron {self.layer}.{self.index}",
                "attn": f"layer {self.layer} attention", "mlp": f"layer {self.layer} MLP",
                "layer": f"layer {self.layer}"}[self.kind]


def parse(kind: str, text: object) -> Component:
    """A component from its spelling (see the module docstring)."""
    if kind not in KINDS:
        raise ExplorerError(f"Unknown component {kind!r}: use one of {', '.join(KINDS)}.")
    typed = str(text or "").strip()
    match = re.fullmatch(_PATTERN[kind], typed, flags=re.IGNORECASE)
    if match is None:
        form, example = _SPELLING[kind]
        raise ExplorerError(f"A {kind} is written {form}, e.g. {example}, not {shorten(typed)!r}.")
    layer = int(match.group(1))
    if kind == "block":
        return Component(match.group(2).lower(), layer)
    return Component(kind, layer, int(match.group(2)) if kind in ("head", "neuron") else None)


def _check_sizes(component: Component, layers: int, heads: int, width: int) -> Component:
    if not 0 <= component.layer < layers:
        raise ExplorerError(f"Layer {component.layer} is out of range: this model has layers 0 to {layers - 1}.")
    if component.kind == "head" and not 0 <= int(component.index or 0) < heads:
        raise ExplorerError(f"Head {component.index} is out of range: this model has heads 0 to {heads - 1} in "
                            "each layer.")
    if component.kind == "neuron" and not 0 <= int(component.index or 0) < width:
        raise ExplorerError(f"Neuron {component.index} is out of range: this model's MLP has neurons 0 to "
                            f"{width - 1} in each layer.")
    return component


def check(component: Component, s: Sites) -> Component:
    """``component`` when the model has it, else an ExplorerError with the ranges it has."""
    return _check_sizes(component, s.layers, s.heads, s.d_ff or 0)


def check_config(component: Component, config: Mapping[str, object]) -> Component:
    """:func:`check` from the model's configuration, before it loads (a number no stack has is refused at once;
    an encoder-decoder's stack is checked again once loaded). A config that names no sizes checks nothing here.

    >>> check_config(Component("head", 99, 99), {"model_type": "gpt2", "n_layer": 12, "n_head": 12})
    Traceback (most recent call last):
    ...
    explorer.core.errors.ExplorerError: Layer 99 is out of range: this model has layers 0 to 11.
    """
    decoder = config.get("decoder") if isinstance(config.get("decoder"), Mapping) else config
    assert isinstance(decoder, Mapping)
    layers = max(num_layers(config) or 0, num_layers(config, "decoder") or 0)
    heads = max(num_heads(config) or 0, config_int(decoder, "decoder_attention_heads", *HEAD_FIELDS) or 0)
    width = max(config_int(config, *FF_FIELDS) or 0, config_int(decoder, *FF_FIELDS) or 0)
    if not layers:
        return component
    return _check_sizes(component, layers, heads or 10**9, width or 10**9)
