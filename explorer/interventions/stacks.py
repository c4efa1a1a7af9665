"""Which stack of blocks an intervention acts on, and its layers' relative depth.

A decoder or an encoder has one stack. An encoder-decoder has two; :mod:`explorer.internals.sites` names the
decoder's (where the next token is formed). A clean and a corrupted prompt differ in the *encoder's* input, and the
decoder reads the same text in both runs (:mod:`explorer.interventions.prompts`), so patching the encoder's stack,
position by position of the typed prompt, is what shows where the changed word is carried; :func:`stack_sites`
gives the encoder's hook points with the same spellings ``sites`` tries for the decoder's.

>>> relative_depth(3)
[0.0, 0.5, 1.0]
>>> relative_depth(1)
[1.0]
"""

from __future__ import annotations

from dataclasses import replace

from torch import nn

from explorer.core.errors import ExplorerError
from explorer.internals import sites

__all__ = ["STACKS", "ENCODER_STACKS", "relative_depth", "stack_sites"]

STACKS = ("decoder", "encoder")
# An encoder-decoder's encoder stack, tried in order (BART/mBART/Marian/Pegasus, T5/mT5/UMT5, BERT2BERT).
ENCODER_STACKS = ("model.encoder.layers", "encoder.block", "encoder.layers", "encoder.bert.encoder.layer")


def relative_depth(layers: int) -> list[float]:
    """Each layer's depth from 0 (first block) to 1 (last block), so stacks of different heights line up."""
    if layers <= 1:
        return [1.0] * layers
    return [i / (layers - 1) for i in range(layers)]


def _within(model: nn.Module, block0: str, spellings: tuple[str, ...]) -> str | None:
    """The first of ``spellings`` found inside ``block0``, as a template over layers."""
    for rel in spellings:
        try:
            sites.module(model, f"{block0}.{rel}")
        except AttributeError:
            continue
        return f"{block0.rpartition('.')[0]}.{{i}}.{rel}"
    return None


def _encoder(model: nn.Module, decoder: sites.Sites) -> sites.Sites:
    for path in ENCODER_STACKS:
        try:
            blocks = sites.module(model, path)
        except AttributeError:
            continue
        if isinstance(blocks, nn.ModuleList) and len(blocks):
            block0 = f"{path}.0"
            heads_in = _within(model, block0, sites.HEADS_IN)
            width = decoder.head_width
            heads_of = sites.module(model, heads_in.format(i=0)) if heads_in else None
            in_features = getattr(heads_of, "in_features", None)
            heads = int(in_features) // width if in_features and width else decoder.heads
            return replace(decoder, layers=len(blocks), heads=heads, entry=block0, block_t=f"{path}.{{i}}",
                           attn_t=_within(model, block0, sites.ATTN), heads_in_t=heads_in,
                           mlp_t=_within(model, block0, sites.MLP),
                           neurons_in_t=_within(model, block0, sites.NEURONS_IN),
                           shared=False)
    raise ExplorerError("The explorer does not know where this encoder-decoder's encoder layers are: patch its "
                        "decoder stack instead (stack=decoder).")


def stack_sites(model: nn.Module, stack: str | None = None) -> tuple[sites.Sites, str]:
    """(hook points, stack name) of the stack an intervention acts on: ``stack`` ("decoder" or "encoder") or, when
    None, the encoder of an encoder-decoder and the one stack of any other model."""
    s = sites.of(model)
    if stack is not None and stack not in STACKS:
        raise ExplorerError(f"Unknown stack {stack!r}: use one of {', '.join(STACKS)}.")
    if s.family != "encoder-decoder":
        if stack == "decoder" and s.family == "encoder" or stack == "encoder" and s.family == "decoder":
            raise ExplorerError(f"This model has no {stack} stack (it is one {s.family} stack): leave the stack "
                                "unset, or pick the one it has.")
        return s, "encoder" if s.family == "encoder" else "decoder"
    if stack == "decoder":
        return s, "decoder"
    return _encoder(model, s), "encoder"
