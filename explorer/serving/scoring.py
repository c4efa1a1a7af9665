"""A text's log-likelihood under a served model, from the log-probabilities of the text's own tokens.

Fill-in and QA rank candidate answers by how likely the *whole* text is with each one, so the words after a
blank count too. In-process that is one forward pass (:mod:`explorer.tasks.causal.scoring`). A server sends no
logits, but an OpenAI-compatible ``/v1/completions`` request with ``echo=True, logprobs=1, max_tokens=1``
returns the prompt's own tokens with each one's log-probability (the probe's ``prompt_logprobs``). So one request
scores one text: :func:`score` sums the continuation's tokens given the context, :func:`score_many` sends many
such requests in parallel.

The server tokenises ``context + continuation`` its own way, and a token may straddle the boundary (context
``"is "`` and continuation ``"Paris"`` give the one token ``" Paris"``). Tokens are therefore matched by their
text offset, never by list index: a token is the continuation's when it ends after the context (it straddles
or follows it) and starts before the text's end (the one token the request generates is dropped). A text's
first token has no log-probability (engines drop the prediction of ``<bos>``), so with an empty context the
first token is given, not scored.

Cost: llama-cpp-python sorts its 262,144-token vocabulary in Python for every echoed position, about 0.6 s per
token on 2 cores (an 8-token sentence: 5-6 s); a GPU engine (vLLM) answers in milliseconds.

>>> # "The capital is Paris." after "The capital is": The| capital| is| Paris|.| and the generated " It"
>>> continuation_logprobs((0, 3, 11, 14, 20, 21), (None, -9.9, -1.2, -2.4, -0.9, -1.5), 14, 21)
[-2.4, -0.9]
>>> # after "The capital is " (15 characters): " Paris" straddles the boundary, so it is the continuation's
>>> continuation_logprobs((0, 3, 11, 14, 20, 21), (None, -9.9, -1.2, -2.4, -0.9, -1.5), 15, 21)
[-2.4, -0.9]
>>> check_pair("The capital of France is", "")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: Nothing to score: the continuation is empty (give the words whose likelihood you ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from explorer.core.errors import ExplorerError
from explorer.core.limits import SERVED_SCORED_CHARS
from explorer.runtime import cancel
from explorer.serving import client
from explorer.serving.client import Completion, ServedError
from explorer.serving.endpoints import Endpoint
from explorer.serving.probe import Capabilities, neutral, require

__all__ = ["MAX_PAIRS", "Scored", "check_pair", "continuation_logprobs", "score", "score_many",
           "scored", "scored_anytime", "scored_many"]

MAX_PAIRS = 64  # texts scored in one call (each is one request)
PURPOSE = "whole-text scoring (fill-in and QA rank their candidates with it)"


@dataclass(frozen=True)
class Scored:
    """One scored text: the log-probabilities of its own tokens, split at the context's end."""

    context: str
    continuation: str
    logprob: float  # sum over the continuation's tokens: log p(continuation | context)
    whole: float  # sum over every token of the text that has one (all but the first)
    tokens: int  # the server's token count of the text (``<bos>`` included when it says so)
    scored: int  # continuation tokens that were scored


def check_pair(context: object, continuation: object) -> str:
    """``context + continuation``, or one ExplorerError before any request (not text, empty, huge, NUL)."""
    if not isinstance(context, str) or not isinstance(continuation, str):
        raise ExplorerError("A scored text must be a string (context and continuation).")
    if not continuation:
        raise ExplorerError("Nothing to score: the continuation is empty (give the words whose likelihood you want).")
    text = context + continuation
    if not text.strip():
        raise ExplorerError("The text to score is only whitespace: type some words.")
    if len(text) > SERVED_SCORED_CHARS:
        raise ExplorerError(f"The text to score has {len(text):,} characters; a served model scores at most "
                            f"{SERVED_SCORED_CHARS:,} at once (every token is one scored position): shorten it.")
    if "\x00" in text:
        raise ExplorerError("The text to score holds a NUL character, which no engine reads: remove it.")
    return text


def continuation_logprobs(offsets: Sequence[int], logprobs: Sequence[float | None], boundary: int,
                          end: int) -> list[float | None]:
    """The log-probabilities of the tokens that end after ``boundary`` and start before ``end`` (the text's
    length): a token straddling the boundary is the continuation's. A token's end is the next token's offset."""
    out: list[float | None] = []
    for i, (at, lp) in enumerate(zip(offsets, logprobs, strict=False)):
        stop = offsets[i + 1] if i + 1 < len(offsets) else end + 1
        if at < end and stop > boundary:
            out.append(lp)
    return out


def _from_completion(ep: Endpoint, out: Completion, context: str, continuation: str) -> Scored:
    """A :class:`Scored` from an echo answer, or a ServedError when the server did not echo what was sent."""
    text = context + continuation
    if not out.text.startswith(text) or len(out.text_offset) != len(out.token_logprobs) or not out.text_offset:
        raise ServedError(f"{ep.shown} did not echo the text with its tokens' log-probabilities, so it cannot be "
                          "scored (the engine may ignore echo).", "garbage")
    inside = [lp for at, lp in zip(out.text_offset, out.token_logprobs, strict=True) if at < len(text)]
    mine = continuation_logprobs(out.text_offset, out.token_logprobs, len(context), len(text))
    first_missing = bool(inside) and inside[0] is None  # the text's first token: never predicted
    given = mine[1:] if first_missing and len(mine) == len(inside) else mine
    if any(lp is None for lp in given):
        raise ServedError(f"{ep.shown} sent no log-probability for a token of the scored text (it may have ruled "
                          "the token out): the text cannot be scored.", "garbage")
    if not given:
        raise ExplorerError("The text to score is a single token: a served model scores each token from the ones "
                            "before it, so give some context before the continuation.")
    whole = [lp for lp in inside if lp is not None]
    tokens = out.prompt_tokens or len(inside)
    return Scored(context, continuation, float(sum(lp for lp in given if lp is not None)), float(sum(whole)), tokens,
                  len(given))


def _one(ep: Endpoint, caps: Capabilities, context: str, continuation: str) -> Scored:
    out = client.complete(ep, context + continuation, max_tokens=1, logprobs=1, echo=True, temperature=0.0,
                          extra=neutral(caps))
    return _from_completion(ep, out, context, continuation)


def scored(ep: Endpoint, context: str, continuation: str) -> Scored:
    """``continuation`` scored after ``context`` by one echo request (refused where the server cannot)."""
    check_pair(context, continuation)
    return _one(ep, require(ep, "prompt_logprobs", PURPOSE), context, continuation)


def score(ep: Endpoint, context: str, continuation: str) -> float:
    """log p(continuation | context): the sum of the continuation's token log-probabilities, one request."""
    return scored(ep, context, continuation).logprob


def _check_pairs(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    if not pairs:
        raise ExplorerError("Nothing to score: give at least one (context, continuation) pair.")
    if len(pairs) > MAX_PAIRS:
        raise ExplorerError(f"{len(pairs)} texts to score at once; at most {MAX_PAIRS} (each is one server "
                            "request): score fewer candidates.")
    checked = []
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ExplorerError("Each text to score is a (context, continuation) pair.")
        check_pair(*pair)
        checked.append((pair[0], pair[1]))
    return checked


def scored_many(ep: Endpoint, pairs: Sequence[tuple[str, str]]) -> list[Scored]:
    """Every pair scored, in order: the requests run in parallel, at most ``ep.max_concurrent`` at once, each in
    this request's context (its budget and stop checks apply in the threads too). The first failure is raised
    once and the requests not started yet are dropped."""
    checked = _check_pairs(pairs)
    caps = require(ep, "prompt_logprobs", PURPOSE)
    return client.parallel(ep, lambda pair: _one(ep, caps, *pair), checked)


def scored_anytime(ep: Endpoint, pairs: Sequence[tuple[str, str]],
                   ) -> tuple[list[Scored | None], cancel.RequestStopped | None]:
    """:func:`scored_many`, but when the request's time runs out the texts scored so far are kept: each pair's
    :class:`Scored` or None (not scored in time), and why it stopped (None: all scored)."""
    checked = _check_pairs(pairs)
    caps = require(ep, "prompt_logprobs", PURPOSE)
    return client.parallel_anytime(ep, lambda pair: _one(ep, caps, *pair), checked)


def score_many(ep: Endpoint, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """log p(continuation | context) for every pair, in order (:func:`scored_many`)."""
    return [s.logprob for s in scored_many(ep, pairs)]
