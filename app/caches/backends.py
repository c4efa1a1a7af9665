"""What every cached wrapper of a model's work shares, here or served (:class:`~explorer.serving.backend.Backend`).

A backend is hashed as its ``ident`` (a stable key: the model resolved once, where it runs; or the frozen
endpoint), never its weights. Its work runs as the backend needs: a model in this process holds a model slot
(``workers.queued``), a served one waits on its server without one (``workers.remote``: the request budget
applies, the engine does the work). Served answers can change under us, so wrappers of both kinds keep a ``ttl``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from explorer.runtime import workers
from explorer.serving.backend import Backend, LocalBackend, ServedBackend

__all__ = ["BY_IDENT", "TTL", "scheduled"]

BY_IDENT: dict[str | type[Any], Callable[[Any], Any]] = {LocalBackend: lambda b: b.ident,
                                                          ServedBackend: lambda b: b.ident}
TTL = 600  # seconds a result is kept: a server can change under us (a local model's stamp follows its weights)
P = ParamSpec("P")
R = TypeVar("R")


def scheduled(model: Backend, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn`` under the request's budget, holding a local model slot only for a model in this process."""
    return (workers.queued if model.in_process else workers.remote)(fn)(*args, **kwargs)
