"""Where a dictionary reads and writes a model: hook points ("taps") and one hooked forward on a view of the model.

A :class:`Tap` is one module of the model and the side of it that is read: its ``output`` (the residual stream
after a block, an attention or MLP sublayer's output) or its ``input`` (the heads concatenated before the
attention's output projection, what enters the MLP). Named sites come from :func:`explorer.internals.sites.of`
(``resid``, ``attn``, ``mlp``, ``heads`` and ``mlp-in``, the transcoder's input); a file that names a module path
itself (Gemma Scope 2's ``model.layers.9.output``) becomes a tap by :func:`from_path`.

:func:`run` is the one hooked forward of this package: :func:`explorer.internals.hooked.run` on the shared model's
*view* (a copy of the module tree over the same weights, under the model's lock), so another page's forward on the
shared model never meets these hooks and two requests on one model take turns. It reads taps, replaces them, and
can stop the forward once the last tap it needs has run (harvesting a middle layer skips the rest of the model and
its head).

>>> Tap("model.layers.3", "output", "resid 3").hook_name
'model.layers.3.output'
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from explorer.core.errors import ExplorerError, shorten
from explorer.internals import hooked, located, sites
from explorer.interventions import stacks

__all__ = ["SITES", "SITE_LABELS", "Edit", "Tap", "from_path", "run", "session", "site_tap", "stack_of"]

SITES = ("resid", "attn", "mlp", "heads", "mlp-in")
SITE_LABELS = {"resid": "residual stream", "attn": "attention output", "mlp": "MLP output",
               "heads": "attention heads (before the output projection)", "mlp-in": "MLP input"}
SIDES = ("output", "input")
Edit = Callable[[torch.Tensor], torch.Tensor]  # (B, T, X) -> (B, T, X), the value the model goes on with


@dataclass(frozen=True)
class Tap:
    """One hook point: a module path, the side read, a label, and which call of the module (a shared block)."""

    path: str
    side: str  # "output" or "input"
    label: str
    call: int = 0  # the module's n-th call in one forward (ALBERT's one block runs once per layer)

    @property
    def hook_name(self) -> str:
        """The module path and side, as Hugging Face hook names are spelled (``model.layers.9.output``)."""
        return f"{self.path}.{self.side}"


def stack_of(model: nn.Module, stack: str | None) -> sites.Sites:
    """The hook points of the stack named (an encoder-decoder: ``encoder`` or ``decoder``; None: the decoder's, or
    the one stack of any other model)."""
    if stack is None:
        return sites.of(model)
    return stacks.stack_sites(model, stack)[0]


def _mlp_input(model: nn.Module, s: sites.Sites, layer: int, stack: str | None) -> str:
    """The module whose input is what enters the MLP: the MLP module itself where the card names one that holds
    the neurons (Gemma, T5, GPT-2), else the MLP's up projection from the anatomy card (BERT, BART)."""
    mlp, neurons = s.mlp(layer), s.neurons_in(layer)
    if neurons.startswith(f"{mlp}."):
        return mlp
    found = located.locate(model)
    card_stack = found.card.stack(stack) if stack else found.card.main
    up = card_stack.block.mlp_up
    if up is None:
        raise ExplorerError(f"The explorer does not know where this {s.model_type} model's MLP input is: a "
                            "transcoder needs it. Train a sparse autoencoder on the MLP output instead.")
    return found.path(up, layer)


def site_tap(model: nn.Module, site: str, layer: int, stack: str | None = None) -> Tap:
    """The tap of a named site at ``layer`` (see the module docstring); an ExplorerError for a site or layer the
    model lacks."""
    if site not in SITES:
        raise ExplorerError(f"Unknown site {shorten(str(site))!r}: use one of {', '.join(SITES)}.")
    s = stack_of(model, stack)
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < s.layers:
        raise ExplorerError(f"Layer {layer!r} is out of range: this model has layers 0 to {s.layers - 1}.")
    where = f"{stack} " if stack else ""
    label = f"{where}{SITE_LABELS[site]} of layer {layer}"
    if site != "mlp-in":
        p = hooked.point(s, site, layer)  # the one naming of sites, shared with the lens and patching
        return Tap(p.path, "input" if p.io == "in" else "output", label, p.call)
    call = layer if s.shared else 0
    return Tap(_mlp_input(model, s, layer, stack), "input", label, call)


def from_path(model: nn.Module, hook_name: str) -> Tap:
    """A tap from a module path ending in ``.output`` or ``.input`` (a file's own hook name); the module must
    exist in this model."""
    path, _, side = str(hook_name).rpartition(".")
    if side not in SIDES or not path:
        raise ExplorerError(f"The hook point {shorten(hook_name)!r} does not end in .output or .input: name a "
                            "module of the model and its side, e.g. model.layers.9.output.")
    if not located.has(model, path):
        raise ExplorerError(f"This model has no module {shorten(path)!r}: the file was made for another model "
                            "(or another architecture). Pick the model it was trained on.")
    return Tap(path, side, f"{path} ({side})")


@contextlib.contextmanager
def session(model: nn.Module) -> Iterator[nn.Module]:
    """The shared model's view, its lock held and gradients off, for one or more :func:`run` calls (the lock is
    re-entrant: each run takes it again)."""
    with hooked.session(model) as view, torch.no_grad():
        yield view


class _Stop(Exception):
    """Raised by the last hook a forward needs: nothing after it runs."""


def _point(tap: Tap) -> hooked.Point:
    return hooked.Point(tap.path, "in" if tap.side == "input" else "out", tap.call)


def run(model: nn.Module, inputs: Mapping[str, object], reads: Sequence[Tap] = (),
        edits: Mapping[Tap, Edit] | None = None, stop_at: Tap | None = None) -> tuple[dict[Tap, torch.Tensor], object]:
    """One forward of the shared ``model``'s view on ``inputs``: the value at every tap read and edited (after its
    edit), and the model's output (None when it stopped at ``stop_at``, which must be read or edited)."""
    edits = dict(edits or {})
    got: dict[Tap, torch.Tensor] = {}

    def swap(tap: Tap) -> Edit:
        def fn(value: torch.Tensor) -> torch.Tensor:
            edit = edits.get(tap)
            got[tap] = new = edit(value) if edit is not None else value
            if tap == stop_at:
                raise _Stop
            return new
        return fn

    taps = list(dict.fromkeys([*reads, *edits]))
    output: object = None
    with torch.no_grad():
        try:
            output = hooked.run(model, lambda view: view(**inputs), replace={_point(t): swap(t) for t in taps})[1]
        except _Stop:
            output = None
    missing = [t.label for t in taps if t not in got]
    if missing:
        raise ExplorerError(f"The forward never reached {', '.join(missing)}: this site is not used by this "
                            "model's forward. Pick another site.")
    return got, output
