"""A served decoder on the fill-in and QA tasks: the causal fill-mask column, span infilling and generative QA,
answered with the local code's result types (``ModelFill``, ``InfillResult``, ``GenerativeAnswer``) so the pages
and the CLI draw them unchanged, each saying where it ran (:func:`~explorer.serving.probe.served_on`).

The local causal column (:mod:`explorer.tasks.causal.fill`) takes its candidates from the left context (the top
next tokens at the blank) and ranks them again by the likelihood of the whole text. Both halves exist on a
server: the top next tokens are one ``max_tokens=1`` request (:func:`explorer.serving.decoding.next_token`), and
a whole text is one echo request (:mod:`explorer.serving.scoring`). What differs is the cost: in-process the text
before the blank runs once and 50 candidates share it; a server scores each candidate's text from scratch
(llama-cpp-python on 2 cores: about 0.12 s per token as the explorer starts it, 0.5-0.7 s as a stock server;
1-2 s or 5-8 s per candidate of a short sentence), so a blank gets :data:`SERVED_CANDIDATES` candidates, not 50.
Answers of several tokens come from the server's own greedy continuation at the blank (its prefixes join the
candidates), where the local code runs a short beam.

Question answering is generative: the local prompt, greedy, the first line of the answer, looked up in the
context. A decoder cannot point at a span of the context (an extractive reader scores every token as a start and
an end), so extractive QA on a served model is refused in one sentence (:data:`EXTRACTIVE`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import SERVED_PROMPT_CHARS, SERVED_SCORED_CHARS
from explorer.core.notices import Notice
from explorer.core.userinput import GENERIC_BLANK, require_text, split_blanks
from explorer.runtime import cancel
from explorer.serving import client, decoding, scoring
from explorer.serving.endpoints import Endpoint
from explorer.serving.probe import Capabilities, capabilities, neutral, require, served_on
from explorer.tasks import fillmask, infill, qa
from explorer.tasks.causal.answer import MAX_ANSWER_TOKENS, PROMPT, GenerativeAnswer, locate, locate_part
from explorer.tasks.causal.control import is_blank, looks_like_control
from explorer.tasks.causal.fill import DECODER_MAX_BLANKS, UNFILLED, BlankFill, Candidate, CausalFill, check_count
from explorer.tasks.causal.fill import MAX_ANSWER_TOKENS as MAX_FILL_TOKENS
from explorer.tasks.fillmask.result import FillMaskResult, MaskResult, ModelFill, Prediction

__all__ = ["EXTRACTIVE", "MAX_SERVED_CANDIDATES", "SERVED_CANDIDATES", "SPAN_CANDIDATES", "answer", "ask", "beside",
           "causal_fill", "fill_column", "infill_spans"]

SERVED_CANDIDATES = 5  # candidates per blank in the fill-mask column (each is one request scoring the text)
MAX_SERVED_CANDIDATES = 8  # a larger top-k shows this many: 8 x 6 s already fills a CPU engine's minute
SPAN_CANDIDATES = 3  # next tokens per blank when infilling (the greedy continuation's prefixes join them)
ASKED_K = 20  # next tokens asked at a blank: control tokens and whitespace are dropped, the best kept
EXTRACTIVE = ("A served decoder cannot do extractive question answering: it writes its answer (generative), "
              "while an extractive reader scores every context token as a span's start and end, which an "
              "OpenAI-compatible engine does not expose. Pick a SQuAD reader for extractive answers.")


def _usable(text: str) -> bool:
    """A proposal that can fill a blank: visible, not an end token, not markup (``<h1>``, ``<start_of_image>``)."""
    return not is_blank(text) and text not in decoding.END_TEXTS and not looks_like_control(text.strip())


Stop = cancel.RequestStopped | None  # why an anytime step ended early (None: it did not)


def _greedy(ep: Endpoint, caps: Capabilities, context: str, answer_tokens: int) -> dict[str, float]:
    """The usable prefixes of the server's greedy continuation at the blank (up to a new line), with their
    log-probabilities."""
    greedy = client.complete(ep, context, max_tokens=answer_tokens, logprobs=1, temperature=0.0, extra=neutral(caps))
    found: dict[str, float] = {}
    text, logprob = "", 0.0
    for token, own in zip(greedy.tokens, greedy.token_logprobs, strict=False):
        if own is None or token in decoding.END_TEXTS or "\n" in token:
            break
        text, logprob = text + token, logprob + own
        if _usable(text):
            found.setdefault(text, logprob)
    return found


def _proposals(ep: Endpoint, caps: Capabilities, context: str, n: int, answer_tokens: int,
               ) -> tuple[dict[str, float], Stop]:
    """Candidate texts for a blank after ``context`` with log p(text | context): the ``n`` best usable next
    tokens, and with ``answer_tokens`` > 1 the prefixes of the server's greedy continuation; and why the second
    half stopped early (the request's time ran out: the next tokens are kept)."""
    top = decoding.next_token(ep, context, min(caps.max_k, ASKED_K))
    found = dict([(c.token, c.logit) for c in top.candidates if _usable(c.token)][:n])
    stopped: Stop = None
    if answer_tokens > 1:
        try:
            for text, logprob in _greedy(ep, caps, context, answer_tokens).items():
                found.setdefault(text, logprob)
        except cancel.RequestStopped as err:
            if err.reason == "gone":
                raise
            stopped = err
    if not found:
        raise ExplorerError(f"{ep.shown} proposed nothing visible for the blank (only markup, end or whitespace "
                            "tokens): reword the text before it.")
    return found, stopped


def _shares(logprobs: Sequence[float]) -> list[float]:
    """exp(logprob) normalised over the candidates (sums to 1).

    >>> [round(s, 3) for s in _shares([math.log(3), 0.0])]
    [0.75, 0.25]
    """
    top = max(logprobs)
    weights = [math.exp(lp - top) for lp in logprobs]
    return [w / sum(weights) for w in weights]


@dataclass(frozen=True)
class _Blank:
    """One blank's answers, the token count of its best one's text, and how its ranking was cut short."""

    fill: BlankFill
    tokens: int
    notices: tuple[Notice, ...]
    stopped: Stop
    left_only: bool  # no candidate was scored with the whole text in time: ranked by the text before the blank


def _ranked(index: int, proposed: dict[str, float], done: list[scoring.Scored | None], top_k: int) -> _Blank:
    """The blank's candidates ranked by the whole texts scored in time (all proposals by the left context); by
    the left context alone when none was."""
    scored = [(t, s) for t, s in zip(proposed, done, strict=True) if s is not None]
    if scored:
        found = [Candidate(t, (), proposed[t], s.whole, share)
                 for (t, s), share in zip(scored, _shares([s.whole for _, s in scored]), strict=True)]
    else:
        found = [Candidate(t, (), lp, lp, share)
                 for (t, lp), share in zip(proposed.items(), _shares(list(proposed.values())), strict=True)]
    whole = {c.text: c for c in found}
    every = [whole.get(t) or Candidate(t, (), lp, -math.inf, 0.0) for t, lp in proposed.items()]
    by_left = sorted(every, key=lambda c: -c.left_logprob)[:top_k]
    by_whole = sorted(found, key=lambda c: -c.whole_logprob)[:top_k]
    best = next((s for t, s in scored if t == by_whole[0].text), None)
    return _Blank(BlankFill(index, tuple(by_left), tuple(by_whole)), best.tokens if best else 0, (), None,
                  not scored)


def _blank(ep: Endpoint, caps: Capabilities, before: str, after: str, index: int,
           settings: tuple[int, int, int]) -> _Blank:
    """One blank: proposals from the text before it, each scored with the words after it (``whole_logprob``: every
    token of the text but the first, which no server scores; the same ranking and shares as the local whole-text
    log-likelihood). When the request's time runs out, what was scored is ranked and a notice says how much."""
    top_k, n, answer_tokens = settings
    context = before.rstrip()
    proposed, stopped = _proposals(ep, caps, context, n, answer_tokens)
    done: list[scoring.Scored | None] = [None] * len(proposed)
    if stopped is None:
        done, stopped = scoring.scored_anytime(ep, [(context, text + after) for text in proposed])
    ranked = _ranked(index, proposed, done, top_k)
    if stopped is None:
        return ranked
    count = sum(s is not None for s in done)
    said = (f"Blank {index + 1}: the request's time ran out after {count} of {len(proposed)} candidates were scored "
            "with the whole text; those are ranked.") if count else (
            f"Blank {index + 1}: the request's time ran out before any candidate was scored with the whole text, so "
            "its answers are ranked by the text before the blank alone.")
    return replace(ranked, notices=(Notice("stopped", said),), stopped=stopped)


def _fill(ep: Endpoint, pieces: tuple[str, ...], settings: tuple[int, int, int],
          ) -> tuple[CausalFill, Capabilities, int, frozenset[int]]:
    """Every blank left to right (each replaced by its best whole-text answer before the next), the endpoint's
    capabilities, the token count of the filled text, and the blanks ranked by their left context alone. Anytime:
    when the request's time runs out, the blanks answered so far are kept (the others stay ``___``) and a notice
    says so; only a first blank without any proposal raises."""
    if not pieces[0].strip():  # later blanks follow the answers before them
        raise ExplorerError("The first blank has no words before it: a served decoder continues the text before a "
                            "blank, so start the text with a word or two.")
    begin = time.perf_counter()
    caps = require(ep, "prompt_logprobs", "filling blanks (each candidate's whole text is scored)")
    done, tokens = pieces[0], 0
    blanks: list[BlankFill] = []
    left_only: set[int] = set()
    greedy = " and the prefixes of its greedy continuation" if settings[2] > 1 else ""
    notices = [Notice("info", f"Served by {caps.engine}: the {settings[1]} most likely next tokens at each blank "
                              f"(the server's){greedy}, each put back into the text and the whole text scored by the "
                              "server (one request per candidate; a server never scores a text's first token).")]
    for i in range(1, len(pieces)):
        try:
            cancel.check()  # each blank is a round of requests: a stopped request ends between them
            blank = _blank(ep, caps, done, pieces[i], i - 1, settings)
        except cancel.RequestStopped as err:
            if err.reason == "gone" or not blanks:
                raise
            blank = _Blank(BlankFill(i - 1, (), ()), 0, (), err, False)
        if blank.fill.by_whole:
            blanks.append(blank.fill)
            notices += blank.notices
            tokens, done = blank.tokens or tokens, done.rstrip() + blank.fill.best.text + pieces[i]
            left_only |= {i - 1} if blank.left_only else set()
        if blank.stopped is not None:
            done += "".join(UNFILLED + p for p in pieces[len(blanks) + 1:])
            if len(blanks) < len(pieces) - 1:
                notices.append(Notice("stopped", f"{blank.stopped} Filled: {len(blanks)} of {len(pieces) - 1} blanks; "
                                                 "the others are left as ___ (ask with fewer blanks, or try again)."))
            break
    if len(blanks) > 1:
        notices.append(Notice("info", "Blanks are filled left to right: each is scored with the text up to the "
                                      "next blank, then replaced by its best answer before the next one."))
    text = GENERIC_BLANK.join(pieces)
    return (CausalFill(ep.key, ep.shown, False, text, tuple(blanks), done, tuple(notices),
                       (time.perf_counter() - begin) * 1000), caps, tokens, frozenset(left_only))


def _no_nul(pieces: tuple[str, ...]) -> tuple[str, ...]:
    if any("\x00" in p for p in pieces):
        raise ExplorerError("The text holds a NUL character, which no engine reads: remove it.")
    return pieces


def _pieces(text: object, what: str = "text") -> tuple[str, ...]:
    """The text around its blanks, refused before any request when it cannot be sent."""
    return _no_nul(split_blanks(text, what=what, max_blanks=DECODER_MAX_BLANKS, max_chars=SERVED_SCORED_CHARS,
                                why_cap="a decoder reads the text once per blank"))


def causal_fill(ep: Endpoint, text: str, top_k: int = 5, *, candidates: int = SERVED_CANDIDATES,
                answer_tokens: int = 1) -> CausalFill:
    """Fill every blank of ``text`` with a served decoder (the local :func:`~explorer.tasks.causal.fill.causal_fill`'s
    result)."""
    pieces = _pieces(text)
    settings = (check_count("top-k", top_k, fillmask.MAX_TOP_K),
                check_count("candidates", candidates, MAX_SERVED_CANDIDATES),
                check_count("answer tokens", answer_tokens, MAX_FILL_TOKENS))
    return _fill(ep, pieces, settings)[0]


def fill_column(ep: Endpoint, prompt: str, top_k: int = 5, answer_tokens: int = 1) -> ModelFill:
    """The served decoder's column of the fill-mask comparison: the whole-text ranking as its predictions (score:
    the candidate's share among them), the left-context ranking in a notice, as the local causal column."""
    text = fillmask.clean_text(prompt)
    pieces = _pieces(text, "prompt")
    top_k = check_count("top-k", top_k, fillmask.MAX_TOP_K)
    n = max(SERVED_CANDIDATES, min(top_k, MAX_SERVED_CANDIDATES))
    fill, caps, tokens, _ = _fill(ep, pieces, (top_k, n, check_count("answer tokens", answer_tokens,
                                                                       MAX_FILL_TOKENS)))
    masks = tuple(MaskResult(b.index, -1, tuple(Prediction(-1, c.text, c.text.strip(), c.share) for c in b.by_whole))
                  for b in fill.blanks)  # -1: a server sends neither token ids nor mask positions
    left = "; ".join(", ".join(c.text.strip() for c in b.by_left) for b in fill.blanks)
    notices = [Notice("info", f"Causal model: it reads left to right, so it proposes words from the text before the "
                              f"blank ({left}), then ranks them by the likelihood of the whole sentence.")]
    if top_k > n:
        notices.append(Notice("truncated", f"top-k {top_k} asked: a served decoder scores {n} candidates per blank "
                                           "(each is one request scoring the whole text), so it shows those."))
    return ModelFill(ep.key, ep.shown, False, "served", text, masks, fill.filled, tokens,
                     (*notices, *fill.notices), fill.latency_ms, **_ran(ep, caps))


def beside(local: FillMaskResult | None, eps: Sequence[Endpoint], prompt: str, top_k: int = 5,
           answer_tokens: int = 1) -> FillMaskResult:
    """The local fill-mask result (None: no local model) with a column per served decoder; one that fails is one
    entry of ``errors`` and the others still answer, as a local model that fails."""
    text = fillmask.clean_text(prompt)  # a bad prompt: one message for all, before any request
    models, errors = (local.models, local.errors) if local is not None else ((), ())
    for ep in eps:
        try:
            models += (fill_column(ep, text, top_k, answer_tokens),)
        except ExplorerError as err:
            errors += ((ep.key, str(err)),)
    return FillMaskResult(text, len(fillmask.MARKER.findall(text)), models, errors,
                          local.skipped if local is not None else ())


def _ran(ep: Endpoint, caps: Capabilities) -> dict[str, str]:
    """``device_name`` and ``dtype`` of :func:`served_on` (``device`` is passed on its own)."""
    ran = served_on(ep, caps)
    return {"device_name": ran["device_name"], "dtype": ran["dtype"]}


def _left_note(index: int, fill: CausalFill) -> Notice:
    shown = ", ".join(f"“{c.text.strip()}” {c.share:.0%}" for c in fill.blanks[index].by_whole)
    return Notice("info", f"Blank {index + 1}, by the text before it alone: {shown}.")


def infill_spans(ep: Endpoint, prompt: str, max_new_tokens: int = 24) -> infill.InfillResult:
    """Fill the blanks of ``prompt`` (``___``, ``[MASK]``, ``<mask>``, T5 sentinels) with a served decoder: each
    blank's next tokens and the prefixes of its greedy continuation (up to
    :data:`~explorer.tasks.infill.CAUSAL_SPAN_TOKENS` tokens), ranked by the whole text's likelihood."""
    pieces = _no_nul(infill.span_pieces(prompt, decoder=True))  # at most SPAN_PROMPT_CHARS (explorer.core.limits)
    per_blank = max(1, min(check_count("max new tokens", max_new_tokens, 128), infill.CAUSAL_SPAN_TOKENS))
    begin = time.perf_counter()
    fill, caps, _, left_only = _fill(ep, pieces, (5, SPAN_CANDIDATES, per_blank))
    spans = [b.best.text.strip() for b in fill.blanks]
    how = Notice("info", "Decoder (served): each blank's answers are its most likely next tokens and the server's "
                         "greedy continuation there, ranked again with the words after it (the whole text's "
                         "likelihood, scored by the server).")
    notes = (how, *(_left_note(i, fill) if i in left_only else infill.ranking_note(i, fill) for i in range(len(spans))),
             *fill.notices)
    return infill.InfillResult(ep.shown, "causal", prompt, fill.text, fill.filled, tuple(spans),
                               infill.segments(pieces, spans), True, False, round(time.perf_counter() - begin, 4),
                               notes, **served_on(ep, caps))


def answer(ep: Endpoint, question: str, context: str) -> GenerativeAnswer:
    """The served decoder's answer to ``question`` from ``context``: the local prompt, greedy, its first line,
    looked up in the context (as :func:`explorer.tasks.causal.answer.answer_question`)."""
    question, context = qa.check_qa_text(question, context)
    context = require_text(context, what="context", empty_hint="paste a paragraph that holds the answer.",
                           max_chars=SERVED_PROMPT_CHARS - len(PROMPT) - len(question),
                           limit_note="a served model is sent the prompt whole")
    if "\x00" in question + context:
        raise ExplorerError("The question or the context holds a NUL character, which no engine reads: remove it.")
    begin = time.perf_counter()
    caps = capabilities(ep)
    if not caps.reachable:
        raise client.ServedError(caps.error, "refused")
    out = client.complete(ep, PROMPT.format(context=context, question=question), max_tokens=MAX_ANSWER_TOKENS,
                          temperature=0.0, extra=neutral(caps))
    said = out.text.strip().split("\n")[0].strip()  # one line is the answer; the model would go on with a question
    span, match = locate(said, context), "whole"
    notices = [Notice("info", f"Served by {caps.engine}: written greedily by the server after the same prompt as "
                              "the local decoder's, then looked up in the context.")]
    if span is None:
        span, match = locate_part(said, context), "part"
        found = f": only “{context[span[0]:span[1]]}” does (highlighted)" if span else ""
        notices.append(Notice("info", f"The generated answer does not occur word for word in the context{found}."))
    ran = served_on(ep, caps)
    return GenerativeAnswer(ep.key, question, context, said, span[0] if span else None, span[1] if span else None,
                            (), tuple(notices), (time.perf_counter() - begin) * 1000, match=match if span else "none",
                            device=ran["device"], device_name=ran["device_name"], dtype=ran["dtype"])


def ask(ep: Endpoint, question: str, context: str, kind: str = "generative") -> GenerativeAnswer:
    """Question answering on a served decoder: ``kind`` "generative" answers, "extractive" is refused
    (:data:`EXTRACTIVE`) before any request."""
    if kind == "extractive":
        raise ExplorerError(EXTRACTIVE)
    if kind != "generative":
        raise ExplorerError(f"Question answering is 'generative' or 'extractive', not {shorten(kind)!r}.")
    return answer(ep, question, context)
