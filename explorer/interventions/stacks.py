"""Which stack of blocks an intervention acts on, and its layers' relative depth.

A decoder or an encoder has one stack. An encoder-decoder has two; :mod:`explorer.internals.sites` names the
decoder's (where the next token is formed). A clean and a corrupted prompt differ in the *encoder's* input, and the
decoder reads the same text in both runs (:mod:`explorer.interventions.prompts`), so patching the encoder's stack,
position by position of the typed prompt, is what shows where the changed word is carried; :func:`stack_sites`
gives the encoder's hook points from the same anatomy card as the decoder's.

>>> relative_depth(3)
[0.0, 0.5, 1.0]
>>> relative_depth(1)
[1.0]
"""

from __future__ import annotations

from torch import nn

from explorer.core.errors import ExplorerError
from explorer.internals import sites

__all__ = ["STACKS", "relative_depth", "stack_sites"]

STACKS = ("decoder", "encoder")


def relative_depth(layers: int) -> list[float]:
    """Each layer's depth from 0 (first block) to 1 (last block), so stacks of different heights line up."""
    if layers <= 1:
        return [1.0] * layers
    return [i / (layers - 1) for i in range(layers)]


def _encoder(model: nn.Module) -> sites.Sites:
    try:
        return sites.stack_of(model, "encoder")
    except ExplorerError as err:
        raise ExplorerError("The explorer does not know where this encoder-decoder's encoder layers are: patch its "
                            "decoder stack instead (stack=decoder).") from err


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
    return _encoder(model), "encoder"
