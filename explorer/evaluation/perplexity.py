"""A text's perplexity under a local decoder, a masked LM (pseudo-perplexity) or a served model.

* a decoder: rolling windows of its context, every token scored once (:mod:`explorer.evaluation.rolling`, as
  lm-eval's ``loglikelihood_rolling``); perplexity ``exp(-log-likelihood / tokens)``, and lm-eval's word
  perplexity and bits per byte beside it;
* a masked LM: pseudo-perplexity (Salazar et al. 2020): windows of its limit, each token masked in turn with its
  window visible;
* a served model: the text in pieces of at most :data:`~explorer.core.limits.SERVED_SCORED_CHARS` characters cut
  at spaces, each scored by one echo request on its own (the first token of each piece is given, not scored).

Windows are scored one after another; when a request's budget ends the perplexity is of the windows scored
(``complete`` is False and a notice says how much of the text that is). What a text costs is said before any window
runs (:func:`estimate`, :mod:`~explorer.evaluation.cost`), and inside a request each window is planned against the
budget (:func:`explorer.runtime.cancel.room_for`): one that would not fit ends the run with the windows scored, and
a first one that would not fit is refused in words rather than started. The page scores one window a request
(:func:`in_parts`), each cached, so asking again continues where its budget stopped.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError
from explorer.core.limits import EVALUATION_TEXT_CHARS, SERVED_SCORED_CHARS
from explorer.core.notices import Notice, texts
from explorer.evaluation import cost, rolling
from explorer.evaluation.cost import Cost, Unit
from explorer.evaluation.decoder import DecoderScorer, prefix_token
from explorer.evaluation.masked import MaskedScorer
from explorer.evaluation.score import Scorer
from explorer.evaluation.served import ServedScorer
from explorer.runtime import cancel
from explorer.serving import scoring

if TYPE_CHECKING:  # typing only: transformers loads with the model
    from transformers import PreTrainedModel

__all__ = ["Perplexity", "estimate", "in_parts", "merge", "perplexity", "pieces"]

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Perplexity:
    """A text's perplexity under one model (of the part scored when ``complete`` is False)."""

    model: str
    method: str
    perplexity: float  # exp(-logprob / tokens)
    logprob: float  # summed log-likelihood of the tokens scored
    tokens: int  # tokens scored
    windows: int  # windows (pieces) scored
    total_windows: int
    window: int  # tokens (characters for a served model) a window holds at most
    word_perplexity: float  # lm-eval's: exp(-logprob / words of the text); NaN until complete
    bits_per_byte: float  # lm-eval's: -logprob / bytes / ln 2; NaN until complete
    seconds: float = 0.0
    untrained: bool = False
    notices: tuple[Notice, ...] = ()
    device: str = "cpu"
    device_name: str = "cpu"
    dtype: str = "float32"

    @property
    def complete(self) -> bool:
        return self.windows == self.total_windows

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["notices"] = texts(self.notices)
        out["complete"] = self.complete
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}


def pieces(text: str, size: int = SERVED_SCORED_CHARS) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters, at whitespace where there is some.

    >>> pieces("one two three four", 9)
    ['one two ', 'three ', 'four']
    """
    out, rest = [], text
    while len(rest) > size:
        cut = max((m.end() for m in re.finditer(r"\s+", rest[:size])), default=size)
        out.append(rest[:cut])
        rest = rest[cut:]
    if rest.strip():
        out.append(rest)
    return out


def _check(text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ExplorerError("The text is empty: give a text whose perplexity to measure.")
    if len(text) > EVALUATION_TEXT_CHARS:
        raise ExplorerError(f"The text has {len(text):,} characters; perplexity is measured on at most "
                            f"{EVALUATION_TEXT_CHARS:,}: cut it.")
    if "\x00" in text:
        raise ExplorerError("The text holds a NUL character, which no tokenizer reads: remove it.")
    return text


def _decoder_window(model: PreTrainedModel, context: list[int], predicted: list[int]) -> tuple[float, int]:
    return float(rolling.window_logprobs(model, context, predicted).sum()), len(predicted)


def _units(scorer: Scorer, text: str, window: int | None) -> tuple[list[Unit], int]:
    """One unit per window (its job, the tokens the model reads for it, those it scores), and the window's size."""
    if isinstance(scorer, DecoderScorer):
        size = window or scorer.window
        tok, model = scorer.loaded.tokenizer, scorer.loaded.model
        ids = [int(i) for i in tok(text, add_special_tokens=False)["input_ids"]]
        spans = rolling.windows(ids, prefix_token(tok), size)
        return [Unit(partial(_decoder_window, model, c, p), len(c) + len(p) - 1, len(p)) for c, p in spans], size
    if isinstance(scorer, MaskedScorer):
        return _masked_units(scorer, text, window)
    if isinstance(scorer, ServedScorer):
        return [Unit(partial(_served_piece, scorer, p), len(p), len(p)) for p in pieces(text)], SERVED_SCORED_CHARS
    raise ExplorerError(f"{scorer.key} is an encoder-decoder: a text's perplexity needs a decoder (gemma3-270m) or "
                        "a masked LM (pseudo-perplexity). Score it on a cloze task instead.")


def _served_piece(scorer: ServedScorer, piece: str) -> tuple[float, int]:
    got = scoring.scored(scorer.ep, "", piece)
    return got.logprob, got.scored


def _around(scorer: MaskedScorer) -> tuple[list[int], list[int]]:
    """The special tokens a masked LM's input starts and ends with ([CLS] ... [SEP], <s> ... </s>)."""
    tok = scorer.loaded.tokenizer
    first = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
    last = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
    return ([first] if first is not None else []), ([last] if last is not None else [])


def _masked_window(scorer: MaskedScorer, chunk: list[int]) -> tuple[float, int]:
    """A window's pseudo-log-likelihood: each of its tokens masked in turn, the special tokens around it."""
    head, tail = _around(scorer)
    full = [*head, *chunk, *tail]
    positions = list(range(len(head), len(head) + len(chunk)))
    lps, _ = scorer.masked_logprobs([full] * len(positions), positions)
    return sum(lps), len(positions)


def _masked_units(scorer: MaskedScorer, text: str, window: int | None) -> tuple[list[Unit], int]:
    """A window per ``size`` tokens, read once per token (each masked in turn)."""
    tok = scorer.loaded.tokenizer
    specials = sum(map(len, _around(scorer)))
    size = max(1, min(window or scorer.limit, scorer.limit) - specials)
    ids = [int(i) for i in tok(text, add_special_tokens=False)["input_ids"]]
    chunks = [ids[s:s + size] for s in range(0, len(ids), size)]
    return [Unit(partial(_masked_window, scorer, c), len(c) * (len(c) + specials), len(c)) for c in chunks], size


def _plan(scorer: Scorer, text: str, window: int | None) -> tuple[list[Unit], Cost]:
    units, size = _units(scorer, text, window)
    return units, cost.cost(scorer, units, size, "characters" if isinstance(scorer, ServedScorer) else "tokens")


def estimate(scorer: Scorer, text: str, window: int | None = None) -> Cost:
    """What ``text``'s perplexity costs under ``scorer``, said before any window runs (the text is tokenized)."""
    return _plan(scorer, _check(text), window)[1]


def _too_long(plan: Cost, index: int) -> ExplorerError:
    return ExplorerError(f"{plan.model}: window {index + 1:,} of {plan.windows:,} ({plan.work[index]:,} tokens read) "
                         f"would take about {plan.seconds_of(index):.0f} s here ({plan.pace}), more than the "
                         f"{cancel.seconds_left() or 0:.0f} s this request has left, so it was not started. Score a "
                         "shorter text, or run it from the command line, which has no time limit (python -m "
                         "explorer evaluate --model ... --text-file FILE --metric perplexity).")


def _stopped(model: str, done: int, total: int, tokens: int, why: str) -> Notice:
    return Notice("stopped", f"{model} scored {done:,} of {total:,} windows ({tokens:,} tokens) {why}: the "
                             "perplexity is of those. The command line scores the whole text.")


def perplexity(scorer: Scorer, text: str, window: int | None = None, progress: Progress | None = None,
               first: int = 0, last: int | None = None) -> Perplexity:
    """``text``'s perplexity under ``scorer``'s model (``window``: tokens per window, default its context), or that
    of its windows ``first`` to ``last`` (the page's parts, joined by :func:`merge`)."""
    text = _check(text)
    units, plan = _plan(scorer, text, window)
    stop = len(units) if last is None else min(len(units), last)
    began, logprob, tokens, done = time.perf_counter(), 0.0, 0, 0
    notices: list[Notice] = []
    for index in range(first, stop):
        try:
            cancel.check()
            if not cancel.room_for(plan.seconds_of(index)):
                if not done:
                    raise _too_long(plan, index)
                notices.append(_stopped(scorer.key, first + done, len(units), tokens, "before the next window "
                                        "would have passed this request's budget"))
                break
            lp, n = cost.timed(plan, units[index])
        except cancel.RequestStopped as err:
            if err.reason == "gone" or not done:
                raise
            notices.append(_stopped(scorer.key, first + done, len(units), tokens, "before this request's budget "
                                    "ran out"))
            break
        logprob, tokens, done = logprob + lp, tokens + n, done + 1
        if progress is not None:
            progress((first + done) / len(units), f"{scorer.key}: {first + done:,} of {len(units):,} windows scored")
    where = scorer.where()
    part = Perplexity(scorer.key, _method(scorer), math.nan, logprob, tokens, done, len(units), plan.window,
                      math.nan, math.nan, time.perf_counter() - began, scorer.untrained, tuple(notices),
                      where["device"], where["device_name"], where["dtype"])
    return merge([part], text)


def merge(parts: list[Perplexity], text: str, notices: tuple[Notice, ...] = ()) -> Perplexity:
    """Consecutive parts of one text's run (each some of its windows, in order) as one result, its perplexities
    computed from their sums (lm-eval's word perplexity and bits per byte once every window is in)."""
    logprob, tokens = sum(p.logprob for p in parts), sum(p.tokens for p in parts)
    done = sum(p.windows for p in parts)
    whole = done == parts[0].total_windows
    words, size = len(re.split(r"\s+", text)), len(text.encode("utf-8"))
    return replace(parts[0], perplexity=math.exp(-logprob / tokens) if tokens else math.nan, logprob=logprob,
                   tokens=tokens, windows=done, word_perplexity=math.exp(-logprob / words) if whole else math.nan,
                   bits_per_byte=-logprob / size / math.log(2) if whole else math.nan,
                   seconds=sum(p.seconds for p in parts), notices=tuple(n for p in parts for n in p.notices) + notices)


def in_parts(part: Callable[[int, int], Perplexity], plan: Cost, text: str, budget: float,
             progress: Progress | None = None, clock: Callable[[], float] = time.monotonic) -> Perplexity:
    """The text's perplexity a window at a time (``part(first, last)``: each its own request, cached by the page),
    until every window is scored or the next one's estimate would pass ``budget`` seconds of this call's own time.
    What the cache answers costs none of it, so asking again continues where the last call stopped."""
    parts: list[Perplexity] = []
    spent, per = 0.0, plan.per_token
    for index in range(plan.windows):
        need = 0.0 if per is None else per * plan.work[index]
        if parts and spent + need > budget:
            done = sum(p.tokens for p in parts)
            return merge(parts, text, (_stopped(plan.model, index, plan.windows, done, f"within this page's "
                                                f"{budget:.0f} s (run it again to continue from there)"),))
        began = clock()
        parts.append(part(index, index + 1))
        spent += clock() - began
        per = parts[-1].seconds / plan.work[index] if plan.work[index] else per  # measured: plans the next
        if progress is not None:
            progress((index + 1) / plan.windows, f"{plan.model}: {index + 1:,} of {plan.windows:,} windows scored")
    return merge(parts, text)


def _method(scorer: Scorer) -> str:
    if isinstance(scorer, MaskedScorer):
        return ("pseudo-perplexity (Salazar et al. 2020): every token masked in turn with its window visible; not "
                "comparable with a decoder's perplexity")
    if isinstance(scorer, ServedScorer):
        return (f"pieces of at most {SERVED_SCORED_CHARS:,} characters cut at spaces, each scored by one echo "
                "request on its own (its first token given, not scored)")
    return "rolling windows of the model's context, every token scored once (lm-eval's loglikelihood_rolling)"
