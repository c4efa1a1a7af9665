"""One ``/v1/completions`` answer read into a :class:`Completion`, from either log-probability shape.

vLLM and llama-cpp-python send the legacy lists (``tokens``, ``token_logprobs``, ``top_logprobs``,
``text_offset``); llama.cpp's own ``llama-server`` sends ``logprobs.content[]``. Both are checked against their
typed shapes first (:mod:`explorer.serving.answers`); what is read here is then only well-typed. A log-probability
that is null, NaN or -inf (a token the server rules out) is "not given" (None); alternatives without one are
left out of a token's list.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from explorer.serving import answers
from explorer.serving.endpoints import Endpoint

__all__ = ["Completion", "parse"]

Parts = tuple[tuple[str, ...], tuple[float | None, ...], tuple[tuple[tuple[str, float], ...], ...], tuple[int, ...]]


@dataclass(frozen=True)
class Completion:
    """One choice of a ``/v1/completions`` answer, with its per-token log-probabilities when asked."""

    text: str
    tokens: tuple[str, ...]  # the tokens the log-probabilities are about (prompt ones too with echo)
    token_logprobs: tuple[float | None, ...]  # each token's own log-probability (None: not given)
    top_logprobs: tuple[tuple[tuple[str, float], ...], ...]  # per token: (token, log-probability), best first
    text_offset: tuple[int, ...]  # each token's start in the text the server returned
    finish_reason: str | None
    prompt_tokens: int | None  # usage.prompt_tokens, when the server says


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _best_first(pairs: list[tuple[str, float | None]]) -> tuple[tuple[str, float], ...]:
    kept = [(t, v) for t, raw in pairs if (v := _finite(raw)) is not None]
    return tuple(sorted(kept, key=lambda p: -p[1]))


def _legacy(lp: answers.LegacyLogprobs) -> Parts:
    tops = tuple(_best_first(list((entry or {}).items())) for entry in lp.top_logprobs or ())
    return (tuple(lp.tokens or ()), tuple(_finite(v) for v in lp.token_logprobs or ()), tops,
            tuple(lp.text_offset or ()))


def _content(lp: answers.ContentLogprobs) -> Parts:
    """llama.cpp's ``content[]``: {token, logprob, top_logprobs: [{token, logprob}]}; offsets by the tokens' lengths."""
    offsets, at = [], 0
    for item in lp.content:
        offsets.append(at)
        at += len(item.token)
    return (tuple(i.token for i in lp.content), tuple(_finite(i.logprob) for i in lp.content),
            tuple(_best_first([(t.token, t.logprob) for t in i.top_logprobs or ()]) for i in lp.content),
            tuple(offsets))


def in_text(tokens: tuple[str, ...], offsets: tuple[int, ...], text: str) -> tuple[int, ...]:
    """Offsets into the text the server returned. vLLM counts the characters of a leading ``<bos>`` it echoes
    (tokens ``<bos>``, ``The``; offsets 0, 5) that the text itself lacks, so every offset is 5 too far (seen
    against vLLM 0.32; llama-cpp-python renders ``<bos>`` as ""). The shift is what the tokens hold beyond the
    text, when they end with it.

    >>> in_text(("<bos>", "The", " cat"), (0, 5, 8), "The cat")
    (0, 0, 3)
    >>> in_text(("", "The", " cat"), (0, 0, 3), "The cat")
    (0, 0, 3)
    """
    joined = "".join(tokens)
    shift = len(joined) - len(text)
    if shift <= 0 or not offsets or not joined.endswith(text):
        return offsets
    return tuple(max(0, o - shift) for o in offsets)


def parse(ep: Endpoint, data: object) -> Completion:
    """The first choice of a completions answer, or one ServedError naming the field that is wrong."""
    answer = answers.read(ep, answers.Completions, data, "/v1/completions")
    choice = answer.choices[0]
    lp = answers.logprobs(ep, choice.logprobs, "/v1/completions")
    parts: Parts = ((), (), (), ())
    if isinstance(lp, answers.ContentLogprobs):
        parts = _content(lp)
    elif lp is not None:
        parts = _legacy(lp)
    offsets = in_text(parts[0], parts[3], choice.text)
    return Completion(choice.text, parts[0], parts[1], parts[2], offsets, choice.finish_reason,
                      answer.usage.prompt_tokens if answer.usage else None)
