"""Fill blanks with a decoder: candidates from the left context, ranked again by the whole text.

A decoder reads left to right, so at a blank it only knows the words before it: its top next
tokens there are the *left-context* candidates. Putting each candidate back into the sentence
and summing the log-probabilities of every token of the full text lets the words *after* the
blank vote too (the *whole-text* ranking). Both rankings are returned: the gap between them is
what a masked LM such as BERT gets for free by reading both sides.

Several blanks are filled left to right (each scored with the text up to the next blank, then
replaced by its best whole-text answer); an answer of several tokens (a number, a name) comes
from a short beam (:func:`explorer.tasks.causal.scoring.beam_continuations`).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import torch

from explorer.core.errors import ExplorerError, shorten
from explorer.core.handles import Tokenizer
from explorer.core.limits import DECODER_FILL_TEXT_CHARS
from explorer.core.notices import Notice, texts
from explorer.core.userinput import split_blanks
from explorer.runtime import cancel
from explorer.tasks.causal.control import control_ids, is_blank
from explorer.tasks.causal.scoring import PrefixScorer, beam_continuations
from explorer.tasks.generation.prompt import context_limit, decoder_ids

if TYPE_CHECKING:  # typing only: no runtime import of the loader
    from explorer.runtime.loading import LoadedModel

__all__ = ["BEAM_WIDTH", "DECODER_MAX_BLANKS", "MAX_ANSWER_TOKENS", "MAX_CANDIDATES", "BlankFill",
           "Candidate", "CausalFill", "causal_fill", "check_count"]

# Each blank is a left-to-right pass over the text (a beam for longer answers): more would keep a page
# waiting. T5 and BART fill all theirs in one generation, so their cap is higher (infill.SEQ2SEQ_MAX_BLANKS).
DECODER_MAX_BLANKS = 5
UNFILLED = " ___"  # a blank left open when the request's time ran out
MAX_CANDIDATES = 200
MAX_ANSWER_TOKENS = 6
BEAM_WIDTH = 3
BEAM_EXPAND = 5  # next tokens tried per partial answer at each beam step


@dataclass(frozen=True)
class Candidate:
    """One answer for one blank, with both scores."""

    text: str  # decoded answer, leading space included (" capital")
    token_ids: tuple[int, ...]
    left_logprob: float  # log p(answer | text before the blank)
    whole_logprob: float  # log p(whole text with this answer), the sentence up to the next blank
    share: float  # exp(whole_logprob) normalised over the candidates: sums to 1 over them

    @property
    def left_probability(self) -> float:
        return math.exp(self.left_logprob)


@dataclass(frozen=True)
class BlankFill:
    index: int  # 0-based number of the blank in the text
    by_left: tuple[Candidate, ...]  # best first by the left context alone
    by_whole: tuple[Candidate, ...]  # best first by the whole text

    @property
    def best(self) -> Candidate:
        return self.by_whole[0]


@dataclass(frozen=True)
class CausalFill:
    """A decoder's answer for every blank of one text."""

    model: str
    name: str
    untrained: bool
    text: str
    blanks: tuple[BlankFill, ...]
    filled: str  # every blank replaced by its best whole-text answer
    notices: tuple[Notice, ...]
    latency_ms: float
    kind: str = "causal-lm"  # the page labels the column: reads left to right only

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        del out["notices"]  # printed as one sentence, like every other model's column
        out["notice"] = " ".join(texts(self.notices))
        return out


def _pieces(text: object) -> tuple[str, ...]:
    """The text around its blanks (:func:`explorer.core.userinput.split_blanks`) within a decoder's cap."""
    return split_blanks(text, max_blanks=DECODER_MAX_BLANKS, max_chars=DECODER_FILL_TEXT_CHARS,
                        why_cap="a decoder reads the text once per blank")


def _ids(tokenizer: Tokenizer, text: str, *, start: bool) -> list[int]:
    ids = decoder_ids(tokenizer, text) if start else list(tokenizer(text, add_special_tokens=False)["input_ids"])
    # A BERT-style tokenizer (a GPT the pretraining lab trained) has no <bos> or <eos>: its [CLS] starts a text.
    bos: Any = next((i for i in (tokenizer.bos_token_id, tokenizer.eos_token_id,
                                 getattr(tokenizer, "cls_token_id", None))
                if i is not None), None)
    if start and (not ids or ids[0] != bos):
        ids.insert(0, bos)  # scoring needs a first token to predict from (GPT-2 adds none)
    return ids


def _fit(prefix: list[int], suffix: list[int], room: int, limit: int) -> tuple[list[int], list[int], Notice | None]:
    """Cut prefix (keeping its first token, <bos>) and suffix so both fit ``limit`` with ``room`` to spare."""
    if len(prefix) + len(suffix) + room <= limit:
        return prefix, suffix, None
    suffix = suffix[:max(limit // 4, limit - room - len(prefix))]
    keep = limit - room - len(suffix) - 1
    prefix = prefix[:1] + prefix[len(prefix) - keep:] if len(prefix) - 1 > keep else prefix
    return prefix, suffix, Notice("truncated", f"The text is longer than the {limit:,} tokens read here: only the "
                                               "tokens nearest the blank were used.")


# One answer offered for a blank: its token ids, log p(ids | text before the blank), and the whole text's
# log-probability with it when already known (a beam scores each answer it keeps; single tokens are scored after).
Answer = tuple[tuple[int, ...], float, float | None]


def _answers(scorer: PrefixScorer, suffix: list[int], candidates: int, answer_tokens: int,
             banned: frozenset[int], reserve: float | None) -> list[Answer]:
    """The left context's answers for the blank: its ``candidates`` likeliest next tokens, or a beam's answers of up
    to ``answer_tokens`` tokens with both their scores (anytime, ``reserve`` kept for the blanks after)."""
    if answer_tokens == 1:
        nxt = scorer.next_logprobs.clone()
        nxt[sorted(banned)] = float("-inf")
        top = nxt.topk(min(candidates, nxt.shape[0])).indices.tolist()
        return [((int(i),), float(scorer.next_logprobs[int(i)]), None) for i in top]
    found = beam_continuations(scorer, suffix, max_tokens=answer_tokens, width=BEAM_WIDTH, expand=BEAM_EXPAND,
                               banned=banned, anytime=True, reserve=reserve)
    return [(c.ids, c.left, c.logprob) for c in found[:candidates]]


def _candidates(tokenizer: Tokenizer, middles: list[tuple[int, ...]], left: list[float],
                whole: list[float]) -> list[Candidate]:
    shares = torch.softmax(torch.tensor(whole, dtype=torch.float64), dim=0).tolist()
    return [Candidate(tokenizer.decode(list(m), skip_special_tokens=False), m, lf, wh, sh)
            for m, lf, wh, sh in zip(middles, left, whole, shares, strict=True)]


def _visible(tokenizer: Tokenizer, answers: list[Answer], index: int) -> tuple[list[Answer], Notice | None]:
    """The answers that put something visible in the blank; all of them (and a notice) when none does."""
    shown = [a for a in answers if not is_blank(tokenizer.decode(list(a[0]), skip_special_tokens=False))]
    if shown:
        return shown, None
    return answers, Notice("info", f"Blank {index + 1}: every answer the decoder found is empty or whitespace, "
                                   "so the blank is filled with nothing.")


def _cut_note(index: int, scorer: PrefixScorer, scored: int, offered: int, answer_tokens: int) -> Notice | None:
    """What an anytime blank left out, in words: candidates not scored with the whole text, or answer lengths a beam
    did not reach (None when nothing was cut)."""
    if scorer.stopped is None and not scorer.planned_stop:
        return None
    if scored < offered:
        return Notice("stopped", f"Blank {index + 1}: {scored} of {offered} candidates were scored with the whole text "
                                 "in the time this request has; those are ranked (the others only by the text "
                                 "before the blank).")
    if scorer.beam_depth < answer_tokens:
        return Notice("stopped", f"Blank {index + 1}: answers of up to {scorer.beam_depth} token(s) were tried "
                                 f"({answer_tokens} asked) in the time this request has.")
    return None


def _fill_blank(model: Any, tokenizer: Tokenizer, before: str, after: str, index: int, settings: tuple[int, int, int],
                reserve: float | None = None) -> tuple[BlankFill, list[Notice], cancel.RequestStopped | None]:
    """One blank's candidates by both rankings, its notices, and why its whole-text ranking stopped early (the
    request's budget ran out: the candidates scored so far are ranked, and a notice says how many). ``reserve``:
    seconds of the request kept for the blanks after this one (anytime work ends before it)."""
    top_k, candidates, answer_tokens = settings
    limit = context_limit(model)
    prefix, suffix, cut = _fit(_ids(tokenizer, before.rstrip(), start=True), _ids(tokenizer, after, start=False),
                               answer_tokens, limit)
    scorer = PrefixScorer(model, prefix)
    banned = control_ids(tokenizer, scorer.next_logprobs.shape[0])  # never <start_of_image>, <h1>, <pad>...
    answers, empty = _visible(tokenizer, _answers(scorer, suffix, candidates, answer_tokens, banned, reserve), index)
    middles, left = [a[0] for a in answers], [a[1] for a in answers]
    known = [a[2] for a in answers if a[2] is not None]
    # a beam's answers come scored with the whole text already: only single tokens are scored here
    whole = known if len(known) == len(answers) else scorer.scores(middles, suffix, anytime=True, reserve=reserve)
    partial = _cut_note(index, scorer, len(whole), len(middles), answer_tokens)
    found = _candidates(tokenizer, middles[:len(whole)], left[:len(whole)], whole)
    by_left = sorted(_candidates(tokenizer, middles, left, [0.0] * len(middles)) if len(whole) < len(middles)
                     else found, key=lambda c: -c.left_logprob)[:top_k]
    by_whole = sorted(found, key=lambda c: -c.whole_logprob)[:top_k]
    return BlankFill(index, tuple(by_left), tuple(by_whole)), [n for n in (cut, empty, partial) if n], scorer.stopped


def _reserve(blanks_left: int) -> float | None:
    """Seconds of the request to keep for the blanks after this one: an equal share each (None outside a request)."""
    left = cancel.seconds_left()
    return None if left is None else left * (blanks_left - 1) / blanks_left


def check_count(name: str, value: object, hi: int) -> int:
    """``value`` if it is a whole number from 1 to ``hi``, else one ExplorerError naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= hi:
        raise ExplorerError(f"{name} must be a whole number from 1 to {hi} (got {shorten(value)!r}).")
    return value


def causal_fill(loaded: LoadedModel, text: str, top_k: int = 5, *, candidates: int = 50,
                answer_tokens: int = 1) -> CausalFill:
    """Fill every blank of ``text`` with a loaded decoder (``explorer.runtime.loading.LoadedModel``)."""
    begin, pieces = time.perf_counter(), _pieces(text)
    settings = (check_count("top-k", top_k, MAX_CANDIDATES), check_count("candidates", candidates, MAX_CANDIDATES),
                check_count("answer tokens", answer_tokens, MAX_ANSWER_TOKENS))
    done, notices = pieces[0], []
    blanks: list[BlankFill] = []
    for i in range(1, len(pieces)):
        try:
            cancel.check()  # each blank is a pass over the text: a stopped request ends between them
            blank, notes, stopped = _fill_blank(loaded.model, loaded.tokenizer, done, pieces[i], i - 1, settings,
                                                _reserve(len(pieces) - i))
        except cancel.RequestStopped as err:  # anytime: the blanks filled so far, and which are not
            if err.reason == "gone" or not blanks:
                raise
            stopped, blank, notes = err, None, []
        if blank is not None:
            blanks.append(blank)
            notices += [n for n in notes if n not in notices]
            done = done.rstrip() + blank.best.text + pieces[i]  # the answer carries its own leading space
        if stopped is not None:
            done += "".join(UNFILLED + p for p in pieces[len(blanks) + 1:])
            if len(blanks) < len(pieces) - 1:
                notices.append(Notice("stopped", f"{stopped} Filled: {len(blanks)} of {len(pieces) - 1} blanks; the "
                                                 "others are left as ___ (ask with fewer blanks, or try again)."))
            break
    if len(blanks) > 1:
        notices.append(Notice("info", "Blanks are filled left to right: each is scored with the text up to the "
                                      "next blank, then replaced by its best answer before the next one."))
    if loaded.untrained:
        notices.append(Notice("untrained", "Untrained weights: predictions are noise."))
    return CausalFill(loaded.key, loaded.name, loaded.untrained, text, tuple(blanks), done, tuple(notices),
                      (time.perf_counter() - begin) * 1000)
