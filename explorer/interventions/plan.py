"""The cost of an intervention grid, known before any forward runs: how many patched copies, how many per forward,
how many forwards and the bytes of each.

Every cell of a grid (a layer and a position, or a layer and a head) is one patched copy of the corrupted run;
copies share a forward as rows of one batch. The rows one forward holds come from the activations it needs
(:func:`explorer.runtime.activations.per_token_bytes`: the largest layer's live tensors, per token) plus the logits
it returns, within :data:`explorer.runtime.activations.FORWARD_BYTES` and, in a server request, half the memory
the request may still add (:func:`explorer.runtime.cancel.memory_left`). A grid past :data:`MAX_WORK` token
positions in all is refused before work, with its size.

>>> cfg = {"hidden_size": 640, "intermediate_size": 2048, "num_attention_heads": 4}
>>> p = plan(cfg, cells=162, length=9, logits_per_row=262_144)
>>> p.rows_per_forward, p.forwards
(162, 3)
>>> plan(cfg, cells=10, length=9, logits_per_row=262_144, budget=4_000_000).rows_per_forward
2
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from explorer.core.errors import ExplorerError
from explorer.runtime import activations, cancel

__all__ = ["MAX_WORK", "Plan", "plan"]

MAX_WORK = 250_000  # token positions in all the patched copies of one grid (cells x tokens): a 64-token prompt
#                     through 60 layers, or any prompt of the default's size through any catalog model
BASE_FORWARDS = 2  # the clean run (its activations are the patches) and the corrupted run


@dataclass(frozen=True)
class Plan:
    """A grid's work, before it runs."""

    cells: int  # patched copies of the corrupted run
    length: int  # tokens of each copy
    rows_per_forward: int  # copies one batched forward holds
    forwards: int  # batched forwards, the clean and corrupted runs included
    bytes_per_forward: int  # activations and logits of one full batch, beside the weights

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def _budget(budget: int | None) -> int:
    left = cancel.memory_left()  # None outside a server request (the CLI, tests): only the forward's own bound
    bound = activations.FORWARD_BYTES if budget is None else budget
    return bound if left is None else min(bound, left // 2)


def plan(config: object, cells: int, length: int, logits_per_row: int, *, dtype_bytes: int = 4,
         budget: int | None = None, max_rows: int | None = None) -> Plan:
    """The work of ``cells`` patched copies of a ``length``-token forward whose output keeps ``logits_per_row``
    values per copy (at most ``max_rows`` a forward when given: 1 is one forward per cell); an ExplorerError when
    it is past :data:`MAX_WORK` or one copy does not fit the memory."""
    if cells * length > MAX_WORK:
        raise ExplorerError(f"This grid patches {cells:,} copies of a {length}-token forward ({cells * length:,} "
                            f"token positions), more than the {MAX_WORK:,} one grid computes: shorten the prompts or "
                            "pick a model with fewer layers.")
    row = activations.per_token_bytes(config, length, dtype_bytes) * length + 4 * logits_per_row
    allowed = _budget(budget)
    if row > allowed:
        raise ExplorerError(f"One patched copy needs {row / 2**20:,.0f} MB beside the weights and this request may "
                            f"use {allowed / 2**20:,.0f} MB more: shorten the prompts or pick a smaller model.")
    rows = max(1, min(cells, allowed // row, max_rows or cells))
    return Plan(cells, length, rows, BASE_FORWARDS + -(-cells // rows), rows * row)
