"""A process-wide bound on the Lab's runs queued or running, whoever asked for them.

Every browser tab is a new session, and each session may keep a few runs: a per-session limit bounds nothing on
a server. A :class:`Gate` counts the runs admitted and not yet finished across the whole process (one lock, one
counter) and refuses past its limit, saying how many are queued and running. The app admits a run when it queues
it (Train, Resume) and lets it go when its worker ends, however it ends.

>>> gate = Gate(lambda: 2)
>>> gate.admit(2)
>>> gate.admit(1, detail="2 training, 0 waiting")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: This server has 2 Lab runs queued or running (2 training, 0 waiting), and takes ...
>>> gate.leave(); gate.active
1
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from explorer.core import settings
from explorer.core.errors import ExplorerError

__all__ = ["GATE", "Gate", "max_active"]


def max_active() -> int:
    """Lab runs queued or running on this server at once (``EXPLORER_LAB_ACTIVE``, default 8: two training on a
    2-core CPU and six waiting; :mod:`explorer.core.settings`)."""
    return settings.LAB_ACTIVE.value()


class Gate:
    """Admits runs up to ``limit()`` at once in this process; thread-safe."""

    def __init__(self, limit: Callable[[], int] = max_active) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self.active = 0

    @property
    def limit(self) -> int:
        return self._limit()

    def admit(self, n: int = 1, detail: str = "") -> None:
        """Count ``n`` more runs, all or none; past the limit an ExplorerError says how many there are."""
        with self._lock:
            limit = self._limit()
            if self.active + n > limit:
                runs = f"{self.active} Lab run{'s' if self.active != 1 else ''}"
                asked = f" ({detail})" if detail else ""
                more = f"; {n} more would not fit" if n > 1 and self.active < limit else ""
                raise ExplorerError(
                    f"This server has {runs} queued or running{asked}, and takes at most {limit} at once from all "
                    f"its visitors together{more}: wait for one to finish, or train from the command line "
                    "(python -m explorer pretrain ...), which has no such limit.")
            self.active += n

    def leave(self) -> None:
        """One admitted run finished (done, stopped, failed or never started)."""
        with self._lock:
            self.active = max(0, self.active - 1)


GATE = Gate()  # the server's one gate (the Lab's cached wrapper admits and releases through it)
