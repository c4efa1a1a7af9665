"""The model's own intermediates: one forward with hooks on the modules a walk compares with.

Loaded models are shared by every session and never changed: hooks only read, go on and come off in a
``try/finally``, and record only the calls of the thread that put them on (another session's forward on the same
model at the same moment passes through them untouched). Walks of one model take turns (:func:`lock_of`): their
captures hold a few megabytes each.

>>> import torch
>>> net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
>>> got = capture(net, [Point("0"), Point("1", "in")], lambda: net(torch.ones(1, 2)))
>>> got.value(Point("0")).shape, torch.equal(got.value(Point("0")), got.value(Point("1", "in")))
(torch.Size([1, 3]), True)
>>> net._forward_hooks, net[0]._forward_hooks
(OrderedDict(), OrderedDict())
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch import nn

from explorer.internals.hooked import Point
from explorer.internals.located import module
from explorer.internals.sites import first

__all__ = ["Captured", "Point", "capture", "lock_of"]

_LOCKS: weakref.WeakKeyDictionary[nn.Module, threading.Lock] = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def lock_of(model: nn.Module) -> threading.Lock:
    """The lock walks of ``model`` take turns with."""
    with _GUARD:
        if model not in _LOCKS:
            _LOCKS[model] = threading.Lock()
        return _LOCKS[model]




@dataclass(frozen=True)
class Captured:
    """What the hooks saw: per (path, io), one tensor per call (float32, on the model's device); and the output."""

    values: dict[tuple[str, str], list[torch.Tensor]]
    output: object

    def value(self, point: Point) -> torch.Tensor | None:
        calls = self.values.get((point.path, point.io), [])
        return calls[point.call] if point.call < len(calls) else None


def _tensor(args: tuple[object, ...], kwargs: dict[str, object]) -> torch.Tensor | None:
    if args:  # BigBird-Pegasus's position table is called with the input's shape, not a tensor: nothing to keep
        return None if isinstance(args[0], torch.Size) else first(args[0])
    found = kwargs.get("hidden_states", next((v for v in kwargs.values() if isinstance(v, torch.Tensor)), None))
    return first(found) if found is not None else None


def capture(model: nn.Module, points: Iterable[Point], call: Callable[[], object]) -> Captured:
    """Run ``call`` (a forward of ``model``) with hooks on every point's module; the hooks come off whatever
    happens."""
    me, values = threading.get_ident(), dict[tuple[str, str], list[torch.Tensor]]()
    wanted = {(p.path, p.io) for p in points}

    def keep(key: tuple[str, str], tensor: torch.Tensor | None) -> None:
        if threading.get_ident() == me and tensor is not None:
            values.setdefault(key, []).append(tensor.detach().float().clone())

    handles = []
    try:
        for path, io in sorted(wanted):
            target, key = module(model, path), (path, io)
            if io == "in":
                handles.append(target.register_forward_pre_hook(
                    lambda _m, a, k, key=key: keep(key, _tensor(a, k)), with_kwargs=True))
            else:
                handles.append(target.register_forward_hook(lambda _m, _a, out, key=key: keep(key, first(out))))
        with torch.inference_mode():
            output = call()
    finally:
        for handle in handles:
            handle.remove()
    return Captured(values, output)
