"""What scoring a continuation gives back, and what every scorer (local or served) answers to.

A scorer gets *groups*: one context with its continuations (an example's choices, or a cloze example's one
continuation), so a model that can share the context's work among the choices (a decoder's KV cache, an
encoder-decoder's encoder pass) does so. It answers one :class:`Score` per continuation, in order.

>>> Score(-3.5, True, 2).per_token
-1.75
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from explorer.runtime import cancel

__all__ = ["Group", "Score", "Scorer", "each_example", "where_fields"]

Group = tuple[str, tuple[str, ...]]  # (context, continuations scored after it)


@dataclass(frozen=True)
class Score:
    """One continuation after its context."""

    logprob: float  # sum over the continuation's tokens of log p(token | everything before it)
    greedy: bool | None  # every continuation token was the model's most likely one (None: the server did not say)
    tokens: int  # continuation tokens scored

    @property
    def per_token(self) -> float:
        return self.logprob / self.tokens if self.tokens else 0.0


def where_fields(ran: Mapping[str, object]) -> dict[str, str]:
    """The ``device``, ``device_name`` and ``dtype`` of ``ran`` (a model's ``ran_on``, a server's ``served_on``)."""
    return {name: str(ran[name]) for name in ("device", "device_name", "dtype")}


class Scorer(Protocol):
    """A model that scores continuations: local (decoder, masked LM, encoder-decoder) or served."""

    key: str  # the model as results name it
    family: str  # "decoder", "masked", "encoder-decoder" or "served"
    method: str  # how a continuation is scored, in words (pages show it beside the results)
    untrained: bool  # random weights: every result is labelled so

    def where(self) -> dict[str, str]:
        """``device``, ``device_name`` and ``dtype`` fields of the results (what ran)."""
        ...

    def check(self, groups: Sequence[Group]) -> None:
        """Refuse, before any work, a group this scorer cannot take (one ExplorerError naming it)."""
        ...

    def score(self, groups: Sequence[Group]) -> list[list[Score]]:
        """One :class:`Score` per continuation of every group, in order."""
        ...


def each_example(example: Callable[[str, Sequence[str]], list[Score]], groups: Sequence[Group]) -> list[list[Score]]:
    """``example(context, continuations)`` for every group in turn, the request's stop checked between them (the
    scorers that cannot share work across examples: masked LMs, encoder-decoders)."""
    out = []
    for context, continuations in groups:
        cancel.check()
        out.append(example(context, continuations))
    return out
