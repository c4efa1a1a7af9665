"""nnsight as the intervention engine: a loaded model wrapped for tracing, without touching the shared one.

nnsight instruments a module by installing a controller as its ``forward`` (in the module's ``__dict__``), and
every call of an instrumented module is routed to whichever trace of that module is open *in the process* at that
moment. Both are process-wide facts about the module object. The models :mod:`explorer.runtime.modelcache` keeps
are shared by every session: wrapping one would change it for everybody, and a plain forward another page runs on
it while a trace is open would be routed into that trace (tests/test_interventions_engine.py shows both).

So an :class:`Engine` wraps a *view copy* (:func:`view_copy`): the module tree copied, every parameter and buffer a
new tensor object over the original's storage (no weights are copied), nnsight's controllers installed on the copy
only. There is one engine per loaded model per process, dropped with the model (a weak key), and the model's one
lock around each trace (:meth:`Engine.session`, :func:`explorer.internals.hooked.lock_of`, the lock every hooked
run of the model holds): a wrapper's interleaver is one object, and two traces of it open at once in two threads
would exchange values. Traces of two different models run in parallel.

>>> import torch
>>> net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
>>> twin = view_copy(net)
>>> twin[0].weight is net[0].weight, twin[0].weight.data_ptr() == net[0].weight.data_ptr()
(False, True)
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import warnings
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING

import torch

from explorer.core.errors import ExplorerError
from explorer.internals import hooked, sites
from explorer.internals.hooked import view_copy

if TYPE_CHECKING:  # typing only: nnsight imports transformers at its top
    from nnsight import Envoy

__all__ = ["Engine", "engine_for", "offloaded", "view_copy"]

_ENGINES: weakref.WeakKeyDictionary[torch.nn.Module, Engine] = weakref.WeakKeyDictionary()
_CREATE = threading.Lock()  # two sessions asking for one model's engine at once build it once


def offloaded(model: torch.nn.Module) -> bool:
    """Whether accelerate spread ``model`` over devices (its hooks move tensors between layers)."""
    return getattr(model, "hf_device_map", None) is not None or any(
        "_hf_hook" in m.__dict__ for m in model.modules())


class Engine:
    """One loaded model as nnsight sees it: the view copy, its root envoy, its hook points and its lock."""

    def __init__(self, model: torch.nn.Module) -> None:
        from nnsight import NNsight

        self.model = view_copy(model)
        with warnings.catch_warnings():  # "a submodule named 'output'": handled by at()
            warnings.simplefilter("ignore")
            self.envoy: Envoy = NNsight(self.model)
        self.sites = sites.of(self.model)
        self.lock = hooked.lock_of(model)  # the model's, shared with the lens, the attention stream, the walk

    @property
    def dtype_bytes(self) -> int:
        """Bytes of one value of the model's floating dtype (4 in float32, 2 in bfloat16)."""
        return next(self.model.parameters()).dtype.itemsize

    def at(self, path: str) -> Envoy:
        """The envoy of the submodule at a dotted path ("" is the root). A submodule named after a value nnsight
        serves on every envoy (BERT's ``attention.output``) is mounted as ``E_<name>``: the path is spelled so."""
        from nnsight import Envoy

        envoy = self.envoy
        for part in path.split(".") if path else ():
            served = not part.startswith("_") and inspect.isdatadescriptor(getattr(Envoy, part, None))
            envoy = getattr(envoy, f"{Envoy.OVERLOAD_PREFIX}{part}" if served else part)
        return envoy

    @contextlib.contextmanager
    def session(self) -> Iterator[Engine]:
        """Hold this engine for one or more traces, without gradients (see the module docstring)."""
        with self.lock, torch.no_grad():
            yield self


def engine_for(model: torch.nn.Module) -> Engine:
    """The engine of a loaded model (built on first use, shared by every session while the model is cached)."""
    if offloaded(model):
        raise ExplorerError("This model is spread over several devices (offloaded): interventions need it whole on "
                            "one device. Pick a smaller model, or a machine with more memory.")
    with _CREATE:
        engine = _ENGINES.get(model)
        if engine is None:
            engine = _ENGINES[model] = Engine(model)
        return engine
