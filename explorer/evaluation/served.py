"""A served model's scores of continuations, through the engine's echoed prompt log-probabilities.

Every continuation is one ``/v1/completions`` request with ``echo`` (at most the endpoint's ``max_concurrent`` in
flight, one for an engine that serves one request at a time, tokens matched to the continuation by their text
offsets, as :mod:`explorer.serving.scoring` matches them). A cloze example also needs to know whether each of its
tokens was the model's most likely one (greedy match): the request's top log-probability of every echoed position
is compared with it, as lm-eval's ``local-completions`` does. A continuation with a token the engine ruled out
(no log-probability, -inf) is scored NaN: a choice that could not be scored, left out and said by the report.

A server that sends no log-probabilities for the prompt's own tokens (llama.cpp's ``llama-server`` ignores
``echo``) cannot score anything: :func:`served_scorer` says so in words before any example is sent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from explorer.core.errors import ExplorerError
from explorer.evaluation.score import Group, Score
from explorer.runtime import cancel
from explorer.serving import client, probe, scoring
from explorer.serving.client import Completion, ServedError
from explorer.serving.endpoints import Endpoint
from explorer.serving.probe import Capabilities

__all__ = ["METHOD", "ServedScorer", "greedy_of", "served_scorer"]

TIE = 1e-6  # a continuation token within this of the top log-probability counts as the top one (engines round)
METHOD = ("summed log-likelihood of the continuation's tokens from the engine's echoed prompt log-probabilities "
          "(/v1/completions with echo and logprobs, one request per choice)")
PURPOSE = "task scoring (each choice's log-likelihood after its context)"


def greedy_of(out: Completion, context: str, continuation: str) -> bool:
    """Whether every scored continuation token of an echo answer was its position's most likely token."""
    text = context + continuation
    tops = [t[0][1] if t else None for t in out.top_logprobs]
    own = scoring.continuation_logprobs(out.text_offset, out.token_logprobs, len(context), len(text))
    best = scoring.continuation_logprobs(out.text_offset, tops[:len(out.text_offset)], len(context), len(text))
    pairs = [(lp, top) for lp, top in zip(own, best, strict=False) if lp is not None]
    return bool(pairs) and all(top is None or lp >= top - TIE for lp, top in pairs)


class ServedScorer:
    """Continuations scored by a served model (``ep``), its prompt log-probabilities checked first."""

    family = "served"
    method = METHOD
    untrained = False

    def __init__(self, ep: Endpoint, caps: Capabilities) -> None:
        self.ep = probe.paced(ep, caps)  # one request at a time for an engine that answers one at a time
        self.caps, self.key = caps, ep.key

    def where(self) -> dict[str, str]:
        on = probe.served_on(self.ep, self.caps)
        return {"device": on["device"], "device_name": on["device_name"], "dtype": on["dtype"]}

    def check(self, groups: Sequence[Group]) -> None:
        """Every (context, continuation) within what one request may carry (:func:`scoring.check_pair`)."""
        for context, continuations in groups:
            for c in continuations:
                scoring.check_pair(context, c)

    def score(self, groups: Sequence[Group]) -> list[list[Score]]:
        """All groups' pairs in parallel requests (at most ``MAX_PAIRS`` a call, the endpoint's bound in flight)."""
        pairs = [(ctx, c) for ctx, conts in groups for c in conts]
        cloze = all(len(conts) == 1 for _, conts in groups)
        flat: list[Score] = []
        for start in range(0, len(pairs), scoring.MAX_PAIRS):
            cancel.check()
            part = pairs[start:start + scoring.MAX_PAIRS]
            flat.extend(client.parallel(self.ep, lambda pair: self._scored(*pair, cloze), part))
        out, at = [], 0
        for _, conts in groups:
            out.append(flat[at:at + len(conts)])
            at += len(conts)
        return out

    def _scored(self, context: str, continuation: str, cloze: bool) -> Score:
        """One echo request with the top log-probability of every position: the score and (cloze) the greedy match.
        A continuation token the engine gives no log-probability (it ruled the token out: -inf) makes the score NaN,
        a choice that could not be scored, said by the report; the text's first token is never predicted."""
        out = client.complete(self.ep, scoring.check_pair(context, continuation), max_tokens=1, logprobs=1,
                              echo=True, temperature=0.0, extra=probe.neutral(self.caps))
        text = context + continuation
        if not out.text.startswith(text) or len(out.text_offset) != len(out.token_logprobs):
            raise ServedError(f"{self.ep.shown} did not echo the text with its tokens' log-probabilities, so it "
                              "cannot be scored (the engine may ignore echo).", "garbage")
        inside = [lp for at, lp in zip(out.text_offset, out.token_logprobs, strict=True) if at < len(text)]
        own = scoring.continuation_logprobs(out.text_offset, out.token_logprobs, len(context), len(text))
        given = own[1:] if inside and inside[0] is None and len(own) == len(inside) else own
        if not given:
            raise ExplorerError("A continuation was scored on no token by the server: give some context before it.")
        if any(lp is None for lp in given):
            return Score(math.nan, None, len(given))
        return Score(float(sum(lp for lp in given if lp is not None)),
                     greedy_of(out, context, continuation) if cloze else None, len(given))


def served_scorer(ep: Endpoint) -> ServedScorer:
    """A scorer for ``ep``, or one ExplorerError that says, in words, why the server cannot score."""
    caps = probe.capabilities(ep)
    if not caps.reachable:
        raise ServedError(caps.error, "refused")
    if not caps.prompt_logprobs:
        why = caps.why_not("prompt_logprobs") or "it sends no log-probabilities for the prompt's own tokens"
        raise ServedError(f"{ep.shown} cannot score a task: {why}. Scoring a continuation needs the log-probability "
                          "of every token of the text sent (/v1/completions with echo and logprobs); vLLM and "
                          "llama-cpp-python send them, llama.cpp's own llama-server does not.", "missing")
    return ServedScorer(ep, caps)
