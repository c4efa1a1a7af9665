"""Every share of memory the explorer plans with, in one table: its value, the memory it is a share of, and what
it bounds.

The shares were constants in the four modules that apply them; side by side they can be read (and changed)
together, each with the memory it is a share of (one request's share is of the whole RAM, one load's of what is
free at that moment, so 30% and 70% do not contradict each other). Each module still applies its own share
(``applied_in``); the environment variables that replace or cap some of them (``EXPLORER_MODEL_CACHE_MB``,
``EXPLORER_RESIDENT_MB``, ``EXPLORER_REQUEST_MB``, ``EXPLORER_MEMORY_CAP_GB``) are in :mod:`explorer.core.settings`.
Torch-free, like the rest of ``core``.

>>> POLICY["MODEL_MEMORY_SHARE"].value, MODEL_MEMORY_SHARE
(0.7, 0.7)
>>> print(POLICY["CPU_MEMORY_SHARE"])
30% of the machine's RAM: what one request may add, the models it loads included (explorer.runtime.cancel)
>>> all(0 < share.value <= 1 for share in POLICY.values())
True
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ACCELERATOR_MEMORY_SHARE", "CPU_MEMORY_SHARE", "MEMORY_PLAN_SHARE", "MODEL_CACHE_SHARE",
           "MODEL_MEMORY_SHARE", "POLICY", "RESIDENT_SHARE", "Share"]


@dataclass(frozen=True)
class Share:
    """A fraction of some memory that bounds something: ``value`` of ``of`` bounds ``bounds``; the module that
    applies it is ``applied_in``."""

    value: float
    of: str
    bounds: str
    applied_in: str

    def __str__(self) -> str:
        return f"{self.value:.0%} of {self.of}: {self.bounds} ({self.applied_in})"


POLICY: dict[str, Share] = {
    "MODEL_MEMORY_SHARE": Share(0.7, "the free RAM (or the GPU's free memory)",
                                "the most one model build or load may plan to take", "explorer.architecture.membudget"),
    "CPU_MEMORY_SHARE": Share(0.30, "the machine's RAM", "what one request may add, the models it loads included",
                              "explorer.runtime.cancel"),
    "ACCELERATOR_MEMORY_SHARE": Share(0.5, "the accelerator's memory", "what one request may add on a GPU",
                                      "explorer.runtime.cancel"),
    # The model itself, other sessions and the allocator need the other half (explorer.runtime.capacity).
    "MEMORY_PLAN_SHARE": Share(0.5, "the device's free memory",
                               "the device-dependent caps: attention tokens, prompt tokens where the KV caches fit, "
                               "models a page", "explorer.runtime.capacity"),
    "MODEL_CACHE_SHARE": Share(0.5, "the available RAM",
                               "the loaded models kept while requests run (unless EXPLORER_MODEL_CACHE_MB)",
                               "explorer.runtime.modelcache"),
    "RESIDENT_SHARE": Share(0.1, "the machine's RAM",
                            "the loaded models kept once the server is idle (unless EXPLORER_RESIDENT_MB)",
                            "explorer.runtime.modelcache"),
}

# The values by name, for the arithmetic of the modules that apply them.
MODEL_MEMORY_SHARE = POLICY["MODEL_MEMORY_SHARE"].value
CPU_MEMORY_SHARE = POLICY["CPU_MEMORY_SHARE"].value
ACCELERATOR_MEMORY_SHARE = POLICY["ACCELERATOR_MEMORY_SHARE"].value
MEMORY_PLAN_SHARE = POLICY["MEMORY_PLAN_SHARE"].value
MODEL_CACHE_SHARE = POLICY["MODEL_CACHE_SHARE"].value
RESIDENT_SHARE = POLICY["RESIDENT_SHARE"].value
