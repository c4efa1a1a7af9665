"""What a saved dictionary is of: the model, where it reads (and a transcoder writes), how it was made, what its
file claims. Every layout (ours, SAELens's, Gemma Scope's) is read into one :class:`About`.

A dictionary reads at a named site (``site``, ``layer``, ``stack``: :func:`explorer.features.hooks.site_tap`) or at
a module path its file names (``hook_in``: Gemma Scope 2's ``model.layers.9.output``); a transcoder writes at
``hook_out`` (or, named, the MLP output of its layer). :func:`taps` turns either into hook points of a loaded model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from torch import nn

from explorer.core.errors import ExplorerError
from explorer.features import hooks
from explorer.features.hooks import Tap

__all__ = ["FORMATS", "About", "taps"]

FORMATS = ("explorer", "saelens", "gemma-scope")


@dataclass(frozen=True)
class About:
    """One dictionary's provenance (see the module docstring)."""

    kind: str  # "topk", "jumprelu", "transcoder", "relu"
    format: str  # how its folder is laid out (FORMATS)
    name: str = ""
    model: str | None = None  # the model it was made for (a catalog key or a name as its file gives it)
    site: str | None = None  # resid, attn, mlp or heads; None when the file names module paths instead
    layer: int | None = None
    stack: str | None = None
    hook_in: str | None = None
    hook_out: str | None = None
    claims: dict[str, object] = field(default_factory=dict)  # what the file says about itself, as it says it
    recipe: dict[str, object] | None = None  # ours: the recipe, the training, the measured figures
    training: dict[str, object] | None = None
    measured: dict[str, object] | None = None
    corpus: str | None = None

    @property
    def transcoder(self) -> bool:
        return self.kind == "transcoder"

    @property
    def where(self) -> str:
        """Where it reads, in words (``residual stream of layer 9``, ``model.layers.9.output``)."""
        if self.site is not None and self.layer is not None:
            stack = f"{self.stack} " if self.stack else ""
            what = "MLP (input to output)" if self.transcoder else hooks.SITE_LABELS.get(self.site, self.site)
            return f"{stack}{what} of layer {self.layer}"
        return " -> ".join(h for h in (self.hook_in, self.hook_out) if h) or "unknown"

    def with_site(self, site: str | None, layer: int | None, stack: str | None = None) -> About:
        """The same dictionary placed at a named site (a file that names none, told by the user)."""
        return replace(self, site=site, layer=layer, stack=stack, hook_in=None, hook_out=None)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def taps(model: nn.Module, about: About) -> list[Tap]:
    """The hook points of ``about`` in ``model``: [input] for an SAE, [input, output] for a transcoder."""
    if about.site is not None and about.layer is not None:
        if about.transcoder:
            return [hooks.site_tap(model, "mlp-in", about.layer, about.stack),
                    hooks.site_tap(model, "mlp", about.layer, about.stack)]
        return [hooks.site_tap(model, about.site, about.layer, about.stack)]
    if about.hook_in is None:
        raise ExplorerError("This file says neither its site nor its layer: give them (--site and --layer, or the "
                            "page's Site and Layer).")
    found = [hooks.from_path(model, about.hook_in)]
    if about.transcoder:
        if about.hook_out is None:
            raise ExplorerError("This transcoder's file does not say where it writes: give its layer (--layer).")
        found.append(hooks.from_path(model, about.hook_out))
    return found
