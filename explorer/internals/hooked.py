"""One hooked run: read or replace named sites of a shared model, on a view of it, one run at a time per model.

The models :mod:`explorer.runtime.modelcache` keeps are shared by every session: a hook put on one fires for every
forward anybody runs on it while it is on, and two requests hooking one model at once read each other's values.
So every feature that looks inside a model (the lens, the tuned lens, the attention stream, the forward pass,
interventions) runs its forward on a *view* of the model (:func:`view_of`: the module tree copied, every weight a
new tensor over the same storage: nothing is copied, nothing of the shared model changes) and holds the model's
lock (:func:`lock_of`) while it does: a second request waits its turn, the others run the model untouched.

Sites are named once, with one vocabulary (:data:`SITES`, the names of the lens, patching, the CLI's flags and the
feature lab), each a module's output or input found through the model's anatomy card
(:mod:`explorer.internals.sites`):

- ``embed``: the stream entering the first block (its input); ``resid``: a block's output;
- ``attn`` / ``mlp``: what the attention or MLP sublayer adds to the stream (its module's output);
- ``heads``: the heads concatenated (the attention's output projection's input); ``neurons``: the MLP's neurons
  (its down projection's input).

>>> import torch
>>> net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
>>> got, out = run(net, lambda view: view(torch.ones(1, 2)), read=[Point("0"), Point("1", "in")],
...                replace={Point("1"): lambda t: t * 0})
>>> bool(out.abs().sum() == 0), got.value(Point("0")).shape, net._forward_hooks, view_of(net)[0]._forward_hooks
(True, torch.Size([1, 3]), OrderedDict(), OrderedDict())
>>> view_of(net) is view_of(net), view_of(net)[0].weight.data_ptr() == net[0].weight.data_ptr()
(True, True)
"""

from __future__ import annotations

import contextlib
import copy
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

import torch
from torch import nn

from explorer.internals.sites import Sites, first, module

__all__ = ["SITES", "Captured", "Point", "lock_of", "point", "run", "session", "streams", "view_copy", "view_of"]

SITES = ("embed", "resid", "attn", "mlp", "heads", "neurons")
T = TypeVar("T")
Replace = Callable[[torch.Tensor], torch.Tensor]

_LOCKS: weakref.WeakKeyDictionary[nn.Module, threading.RLock] = weakref.WeakKeyDictionary()
_VIEWS: weakref.WeakKeyDictionary[nn.Module, nn.Module] = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def view_copy(model: nn.Module) -> nn.Module:
    """``model``'s module tree copied with every parameter and buffer a new tensor over the same storage.

    Tied weights stay tied (one original tensor maps to one new one); the copy's parameters need no gradient, so
    a backward pass on the copy never toggles the shared model's flags."""
    memo: dict[int, torch.Tensor] = {}
    for p in model.parameters():
        memo[id(p)] = nn.Parameter(p.detach(), requires_grad=False)
    for b in model.buffers():
        memo[id(b)] = b.detach()
    return copy.deepcopy(model, memo)


def lock_of(model: nn.Module) -> threading.RLock:
    """The lock every hooked run of ``model`` holds (re-entrant: a run may call a helper that takes it again)."""
    with _GUARD:
        if model not in _LOCKS:
            _LOCKS[model] = threading.RLock()
        return _LOCKS[model]


def view_of(model: nn.Module) -> nn.Module:
    """The one view of ``model`` hooked runs use (made on first use, dropped with the model)."""
    with _GUARD:
        if model not in _VIEWS:
            _VIEWS[model] = view_copy(model)
        return _VIEWS[model]


@contextlib.contextmanager
def session(model: nn.Module) -> Iterator[nn.Module]:
    """Hold ``model``'s lock and give its view, for several runs that must not be interleaved with others."""
    with lock_of(model):
        yield view_of(model)


@dataclass(frozen=True)
class Point:
    """A module's output (or input, ``io="in"``) at its ``call``-th call in the forward (a shared layer is called
    once per layer)."""

    path: str
    io: str = "out"
    call: int = 0

    @property
    def label(self) -> str:
        return self.path if self.io == "out" else f"{self.path} (input)"


def point(sites: Sites, site: str, layer: int = 0) -> Point:
    """The module value a named site is (see the module docstring)."""
    if site not in SITES:
        raise ValueError(f"unknown site {site!r}: one of {', '.join(SITES)}")
    if site == "embed":
        return Point(sites.entry, "in")
    call = layer if sites.shared else 0  # a shared block (ALBERT) is one module, called once per layer
    where = {"resid": (sites.block, "out"), "attn": (sites.attn, "out"), "mlp": (sites.mlp, "out"),
             "heads": (sites.heads_in, "in"), "neurons": (sites.neurons_in, "in")}[site]
    return Point(where[0](layer), where[1], call)


@dataclass(frozen=True)
class Captured:
    """What the run read: per (path, io), one tensor per call (detached, as computed); and the call's result."""

    values: dict[tuple[str, str], list[torch.Tensor]]

    def value(self, at: Point) -> torch.Tensor | None:
        calls = self.values.get((at.path, at.io), [])
        return calls[at.call] if at.call < len(calls) else None

    def calls(self, path: str, io: str = "out") -> list[torch.Tensor]:
        return self.values.get((path, io), [])


def _input(args: tuple[object, ...], kwargs: dict[str, object]) -> torch.Tensor | None:
    if args:
        return first(args[0])
    found = kwargs.get("hidden_states", next((v for v in kwargs.values() if isinstance(v, torch.Tensor)), None))
    return first(found) if found is not None else None


def _swapped(output: object, new: torch.Tensor) -> object:
    """``output`` with its first tensor replaced by ``new`` (a tuple keeps its other elements)."""
    if isinstance(output, torch.Tensor):
        return new
    if isinstance(output, tuple) and output:
        return (_swapped(output[0], new), *output[1:])
    return output


def _pre(act: Callable[[torch.Tensor | None], torch.Tensor | None]) -> Callable[..., object]:
    def hook(_m: nn.Module, args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        new = act(_input(args, kwargs))
        if new is None:
            return None
        return ((new, *args[1:]), kwargs) if args else (args, {**kwargs, "hidden_states": new})
    return hook


def _post(act: Callable[[torch.Tensor | None], torch.Tensor | None]) -> Callable[..., object]:
    def hook(_m: nn.Module, _args: object, output: object) -> object:
        new = act(first(output))
        return None if new is None else _swapped(output, new)
    return hook


def _hooks(view: nn.Module, read: set[tuple[str, str]], replace: Mapping[Point, Replace],
           values: dict[tuple[str, str], list[torch.Tensor]]) -> list[torch.utils.hooks.RemovableHandle]:
    """A hook on each module read or replaced: it counts its calls, swaps the value of a replaced call, keeps the
    value (the new one, where swapped) of a read one."""
    counts: dict[tuple[str, str], int] = {}
    swaps = {(p.path, p.io, p.call): fn for p, fn in replace.items()}
    handles = []
    for key in sorted(read | {(p.path, p.io) for p in replace}):
        def act(tensor: torch.Tensor | None, key: tuple[str, str] = key) -> torch.Tensor | None:
            call = counts[key] = counts.get(key, -1) + 1
            fn = swaps.get((*key, call))
            new = fn(tensor) if fn is not None and tensor is not None else None
            if key in read and tensor is not None:
                values.setdefault(key, []).append((new if new is not None else tensor).detach())
            return new

        target = module(view, key[0])
        handles.append(target.register_forward_pre_hook(_pre(act), with_kwargs=True) if key[1] == "in"
                       else target.register_forward_hook(_post(act)))
    return handles


def run(model: nn.Module, call: Callable[[nn.Module], T], *, read: Iterable[Point] = (),
        replace: Mapping[Point, Replace] | None = None) -> tuple[Captured, T]:
    """``call(view)`` (a forward of ``model``'s view) under the model's lock, with ``read`` points kept and
    ``replace`` points' values swapped (each function gets the value and returns its replacement); the hooks come
    off whatever happens. Returns (what was read, what ``call`` returned)."""
    values: dict[tuple[str, str], list[torch.Tensor]] = {}
    with session(model) as view:
        handles = _hooks(view, {(p.path, p.io) for p in read}, replace or {}, values)
        try:
            result = call(view)
        finally:
            for handle in handles:
                handle.remove()
    return Captured(values), result


def _length(inputs: Mapping[str, torch.Tensor], sites: Sites) -> int:
    key = "decoder_input_ids" if sites.family == "encoder-decoder" and "decoder_input_ids" in inputs else (
        "input_ids" if "input_ids" in inputs else "inputs_embeds")
    return int(inputs[key].shape[1])


def streams(model: nn.Module, sites: Sites, inputs: Mapping[str, torch.Tensor],
            ) -> tuple[torch.Tensor, list[torch.Tensor], object]:
    """One forward of ``model(**inputs)``, hooked (see :func:`run`): (the stream entering the first block
    ``(B, T, d)``, every block's output ``[(B, T, d)] * layers``, the model's own output).

    A shared block (ALBERT) is one module called once per layer. Inputs padded inside the model (Longformer pads to
    its window) come back cut to the input's length."""
    entry, blocks = Point(sites.entry, "in"), [point(sites, "resid", i) for i in range(sites.layers)]
    got, output = run(model, lambda view: view(**inputs), read=[entry, *blocks])
    length = _length(inputs, sites)
    entered, outs = got.value(entry), [got.value(b) for b in blocks]
    assert entered is not None and all(o is not None for o in outs), "a block did not run"
    return entered[:, :length], [o[:, :length] for o in outs if o is not None], output
