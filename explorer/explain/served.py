"""Occlusion through a served model: each token left out of the text, the target scored again by the engine.

A served model sends no gradients and no hidden states, but an echo request returns its log-probabilities of
the text's own tokens (:mod:`explorer.serving.scoring`), which is all occlusion needs: ``log p(target | text)``
and ``log p(target | text without token i)`` for every token. The tokens are the server's own (its tokenize
route; a server without one is occluded word by word, and says so); a decoder's fill-in also scores the words
after the blank, as the local frame does (:mod:`explorer.explain.framer`). The requests run concurrently within
the endpoint's bound (``max_concurrent``; one at a time for an engine that answers one at a time,
:func:`~explorer.serving.probe.paced`), a round at a time: when the request's budget runs out between rounds,
the tokens scored so far are kept (anytime) and a notice says how many.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from explorer.core.errors import ExplorerError
from explorer.core.limits import EXPLAIN_TEXT_CHARS
from explorer.core.notices import Notice
from explorer.core.userinput import MARKER, split_blanks
from explorer.explain.attribution import SERVED_INSIDES, Attribution, TokenScore
from explorer.explain.methods import method_of
from explorer.explain.occlusion import in_rounds
from explorer.explain.target import FOIL_IS_TARGET, NOTHING_TO_ATTRIBUTE, check_question, spaced
from explorer.serving import backend, decoding, probe, scoring
from explorer.serving.endpoints import Endpoint

__all__ = ["Unit", "attribute", "units"]

Unit = tuple[str, int, int, str]  # (where: "before" | "after", start, end, the token's text)


def _split(text: str) -> tuple[str, str, str]:
    """(task, the words before the target, the words after it) of a served decoder's text (checked already)."""
    if not MARKER.search(text):
        return "next-token", text, ""
    left, right = split_blanks(text, max_blanks=1, max_chars=EXPLAIN_TEXT_CHARS,
                               why_cap="one blank is explained at a time")
    return "fill-in", left, right


def units(ep: Endpoint, text: str, where: str) -> tuple[list[Unit], tuple[Notice, ...]]:
    """The server's tokens of ``text`` (its specials left out), or its words when it cannot tokenize."""
    if not text.strip():
        return [], ()
    served = backend.served(ep)
    if served.why_not("tokenize") is None:
        split = served.tokens(text).tokenization
        return [(where, a, b, text[a:b]) for (a, b), sp in zip(split.offsets, split.special, strict=True)
                if not sp and b > a], ()
    words, at = [], 0
    for word in text.split():
        start = text.index(word, at)
        at = start + len(word)
        words.append((where, start - (1 if start and text[start - 1] == " " else 0), at, text[start:at]))
    return words, (Notice("info", f"{ep.shown} has no tokenize route: words are left out one at a time, "
                                  "not tokens."),)


def _pairs(context: str, right: str, scored: list[str], unit: Unit | None) -> list[tuple[str, str]]:
    """(context, continuation) of each scored answer, with ``unit`` left out of the text."""
    ctx, after = context, right
    if unit is not None:
        where, a, b, _ = unit
        ctx, after = (context[:a] + context[b:], right) if where == "before" else (context, right[:a] + right[b:])
    return [(ctx, answer + after) for answer in scored]


def _value(logprobs: list[float]) -> float:
    return logprobs[0] - (logprobs[1] if len(logprobs) > 1 else 0.0)


def _target(ep: Endpoint, context: str, left: str, target: str | None) -> tuple[str, tuple[Notice, ...]]:
    if target is not None and target.strip():
        return spaced(left, target), ()
    top = decoding.next_token(ep, context or " ", 1).candidates[0].token
    return top, (Notice("info", f"No target given: {ep.shown}'s own top prediction {top!r} is explained."),)


def _occluded(ep: Endpoint, context: str, right: str, scored: list[str], shown: list[Unit], first: int, last: int,
              progress: Callable[[float, str], None] | None) -> tuple[float, list[float | None], tuple[Notice, ...]]:
    """(the whole text's value, every unit's score, notices): the text scored once, then each unit left out,
    ``max_concurrent`` requests at a time (:func:`~explorer.explain.occlusion.in_rounds`, anytime)."""
    output = _value(scoring.score_many(ep, _pairs(context, right, scored, None)))

    def score(units_: range) -> list[float]:
        flat = scoring.score_many(ep, [p for u in units_ for p in _pairs(context, right, scored, shown[u])])
        return [output - _value(flat[i:i + len(scored)]) for i in range(0, len(flat), len(scored))]

    found, notes = in_rounds(score, first, last, max(1, ep.max_concurrent // len(scored)), progress,
                             f"occlusion on {ep.shown}")
    return output, [found.get(k) for k in range(len(shown))], notes


def attribute(ep: Endpoint, text: str, target: str | None, method: str = "occlusion", *, foil: str | None = None,
              progress: Callable[[float, str], None] | None = None,
              span: tuple[int, int] | None = None) -> Attribution:
    """Occlusion of every token of ``text`` for ``target`` (against ``foil``) through ``ep`` (see the module;
    ``span``: the tokens ``first`` to ``last`` only, the others left without a score)."""
    if not method_of(method).served:
        raise ExplorerError(f"{ep.shown}: {method} needs the model's gradients, and {SERVED_INSIDES}.")
    text, target, foil = check_question(text, target, foil)  # the local path's rules, before any request
    caps = probe.require(ep, "prompt_logprobs", "occlusion (it scores the text with each token left out)")
    ep = probe.paced(ep, caps)  # the engine's own pace: in flight together only where it answers together
    task, left, right = _split(text)
    context = left.rstrip() if left.strip() else ""
    aim, notes = _target(ep, context, left, target)
    scored = [aim] + ([spaced(left, foil)] if foil is not None else [])
    if len(scored) > 1 and scored[1] == aim:  # the model's own prediction may be the typed foil
        raise ExplorerError(FOIL_IS_TARGET)
    before, n1 = units(ep, context, "before")
    after, n2 = units(ep, right, "after")
    shown = before + after
    if not shown:
        raise ExplorerError(NOTHING_TO_ATTRIBUTE.format(why="the server reads none of its words besides its blank"))
    first, last = (0, len(shown)) if span is None else (max(0, span[0]), min(len(shown), span[1]))
    started = time.perf_counter()
    output, left_out, cut = _occluded(ep, context, right, scored, shown, first, last, progress)
    tokens = tuple(TokenScore(u[3], v) for u, v in zip(shown, left_out, strict=True))
    said = f"log p({aim!r}" + (" and the words after it" if right else "") + ")"
    return Attribution(ep.key, "occlusion", task, said + (f" minus the same for {scored[1]!r}" if foil else ""),
                       aim, scored[1] if len(scored) > 1 else None, output, None, None, tokens, None,
                       round(time.perf_counter() - started, 3), None, notes + n1 + n2 + cut, False,
                       **probe.served_on(ep, caps))

