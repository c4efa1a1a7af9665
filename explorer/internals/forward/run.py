"""A model resolved once, walked: every bad input refused before the model loads, then :func:`walk`.

Before loading: the text (empty, over :data:`~explorer.core.limits.FORWARD_TEXT_CHARS`), the model type (a card,
a family the step-through covers) and the layer and head (in range of its config). The token checks (special
tokens only, over :data:`~explorer.core.limits.FORWARD_TOKENS`) need the tokenizer, which comes with the model;
they run before any forward.

>>> from explorer.runtime.resolve import resolve
>>> check_request(resolve("gpt2", None, random_weights=True), "Hello", layer=3).main.layers
12
>>> check_request(resolve("gpt2", None, random_weights=True), "Hello", layer=12)
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: Layer 12 is out of range: this model has layers 0 to 11.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from explorer.architecture import anatomy, catalog
from explorer.architecture.anatomy import Resolved
from explorer.architecture.membudget import TooBig
from explorer.architecture.modeltypes import config_int, num_heads
from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice
from explorer.internals.forward import families, inputs
from explorer.internals.forward.walk import Walk, check_options, check_range, walk
from explorer.runtime import loading, modelkind
from explorer.runtime.loading import LoadedModel
from explorer.runtime.resolve import ModelRef

__all__ = ["SCALED_LAYERS", "SCALED_WIDTH", "check_request", "config_of", "loading_task", "run", "scaled_down"]

PURPOSE = "the forward pass"
# The walk recomputes attention as eager attention does; a fused kernel (sdpa) rounds otherwise, which Gemma's
# residual stream (values near 1e5) shows as 1e-2 where eager's agrees to the last bit. A separate cached copy.
ATTENTION = "eager"
SCALED_LAYERS = 2  # blocks a scaled-down copy keeps of each stack
SCALED_WIDTH = 1024  # its widest hidden size (heads keep their width: fewer of them)


def config_of(ref: ModelRef) -> dict[str, object] | None:
    """The config the model loads with: its folder's config.json, else its catalog variant's (under the variant's
    model type: BERT2BERT's is a BERT config); None when neither is known."""
    if ref.path is not None:
        found = modelkind.family_of(ref.spec, Path(ref.path))[1]
        if found.get("model_type"):
            return dict(found)
    try:
        variant = catalog.get_variant(ref.spec)
    except ExplorerError:
        return None
    return {**catalog.variant_config(ref.spec), "model_type": variant.model_type}


def check_request(ref: ModelRef, text: object, layer: int | None = None, head: int | None = None,
                  ) -> Resolved | None:
    """The model's card and numbers, once the text, the model and the layer and head are known to be usable (an
    ExplorerError saying what to change otherwise); None when the config is only known once loaded."""
    inputs.check_text(text)
    if not ref.ready and not ref.random_weights:
        raise ExplorerError(ref.reason)
    config = config_of(ref)
    if config is None:
        return None
    numbers = anatomy.resolved(config)
    families.family_of(numbers.card.model_type)
    check_range(numbers, layer, head)
    return numbers


def loading_task(ref: ModelRef) -> str:
    """An encoder loads with its masked-LM head where it has one (a bare sentence encoder as it is); an
    encoder-decoder as seq2seq; a decoder as a causal LM."""
    return ref.head_task(head_optional=True)


def run(ref: ModelRef, text: str, *, layer: int | None = None, head: int | None = None, top_k: int = 5,
        temperature: float = 1.0, keep_tensors: bool = True, device: str | None = None,
        dtype: str | None = None, attn_implementation: str | None = ATTENTION) -> Walk:
    """:func:`~explorer.internals.forward.walk.walk` of ``ref`` on ``text``, bad input refused before it loads
    (loaded with ``attn_implementation``: eager by default, see :data:`ATTENTION`)."""
    check_options(top_k, temperature)
    check_request(ref, text, layer, head)
    loaded, scaled = _load(ref, attn_implementation, device, dtype)
    result = walk(loaded, text, layer=layer, head=head, top_k=top_k, temperature=temperature,
                  keep_tensors=keep_tensors)
    return replace(result, model=ref.spec, notices=result.notices + scaled)


def scaled_down(config: dict[str, object]) -> tuple[tuple[str, int], ...]:
    """The knobs of a copy small enough to walk: :data:`SCALED_LAYERS` blocks of each stack, and a width of at most
    :data:`SCALED_WIDTH` with the same head width (fewer heads) and the same MLP ratio; the layer kinds stay.

    >>> dict(scaled_down({"model_type": "gptj", "n_layer": 28, "n_embd": 4096, "n_head": 16}))
    {'num_hidden_layers': 2, 'hidden_size': 1024, 'num_attention_heads': 4}
    """
    knobs = {"num_hidden_layers": SCALED_LAYERS}
    width, heads = config_int(config, "hidden_size", "n_embd", "d_model"), num_heads(config)
    if width and heads and width > SCALED_WIDTH and width % heads == 0:
        per_head, factor = width // heads, width / SCALED_WIDTH
        knobs |= {"hidden_size": SCALED_WIDTH, "num_attention_heads": max(1, SCALED_WIDTH // per_head)}
        inner = config_int(config, "intermediate_size", "n_inner", "d_ff")
        if inner:
            knobs["intermediate_size"] = max(1, int(inner / factor))
    return tuple(knobs.items())


def _load(ref: ModelRef, attn: str | None, device: str | None, dtype: str | None
          ) -> tuple[LoadedModel, tuple[Notice, ...]]:
    """The model, or for an untrained variant too big to build whole, a scaled-down copy of its config, said so."""
    try:
        return loading.load_model(ref, loading_task(ref), attn_implementation=attn, device=device, dtype=dtype,
                                  purpose=PURPOSE), ()
    except TooBig:
        if not ref.random_weights:
            raise
    scale = scaled_down(config_of(ref) or {})
    loaded = loading.load_model(ref, loading_task(ref), attn_implementation=attn, device=device, dtype=dtype,
                                purpose=PURPOSE, scale=scale)
    said = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in scale)
    return loaded, (Notice("fallback", f"{ref.spec} is too big to build whole within this server's memory: walked as "
                                       f"a scaled-down copy of its config ({said}), the same kinds of layers, "
                                       "untrained. Its steps are the variant's; its sizes are not."),)
