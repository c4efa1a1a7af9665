"""A text's perplexity under a local decoder, a masked LM (pseudo-perplexity) or a served model.

* a decoder: rolling windows of its context, every token scored once (:mod:`explorer.evaluation.rolling`, as
  lm-eval's ``loglikelihood_rolling``); perplexity ``exp(-log-likelihood / tokens)``, and lm-eval's word
  perplexity and bits per byte beside it;
* a masked LM: pseudo-perplexity (Salazar et al. 2020): windows of its limit, each token masked in turn with its
  window visible;
* a served model: the text in pieces of at most :data:`~explorer.core.limits.SERVED_SCORED_CHARS` characters cut
  at spaces, each scored by one echo request on its own (the first token of each piece is given, not scored).

Windows are scored one after another; when a request's budget ends the perplexity is of the windows scored
(``complete`` is False and a notice says how much of the text that is).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError
from explorer.core.limits import EVALUATION_TEXT_CHARS, SERVED_SCORED_CHARS
from explorer.core.notices import Notice, texts
from explorer.evaluation import rolling
from explorer.evaluation.decoder import DecoderScorer, prefix_token
from explorer.evaluation.masked import MaskedScorer
from explorer.evaluation.score import Scorer
from explorer.evaluation.served import ServedScorer
from explorer.runtime import cancel
from explorer.serving import scoring

if TYPE_CHECKING:  # typing only: transformers loads with the model
    from transformers import PreTrainedModel

__all__ = ["Perplexity", "perplexity", "pieces"]

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


Job = Callable[[], tuple[float, int]]  # one window: its summed log-likelihood and its tokens scored


def _decoder_window(model: PreTrainedModel, context: list[int], predicted: list[int]) -> tuple[float, int]:
    return float(rolling.window_logprobs(model, context, predicted).sum()), len(predicted)


def _units(scorer: Scorer, text: str, window: int | None) -> tuple[list[Job], int]:
    """One job per window, and the window's size."""
    if isinstance(scorer, DecoderScorer):
        size = window or scorer.window
        tok, model = scorer.loaded.tokenizer, scorer.loaded.model
        ids = [int(i) for i in tok(text, add_special_tokens=False)["input_ids"]]
        spans = rolling.windows(ids, prefix_token(tok), size)
        return [partial(_decoder_window, model, c, p) for c, p in spans], size
    if isinstance(scorer, MaskedScorer):
        return _masked_units(scorer, text, window)
    if isinstance(scorer, ServedScorer):
        return [partial(_served_piece, scorer, p) for p in pieces(text)], SERVED_SCORED_CHARS
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


def _masked_units(scorer: MaskedScorer, text: str, window: int | None) -> tuple[list[Job], int]:
    tok = scorer.loaded.tokenizer
    specials = sum(map(len, _around(scorer)))
    size = max(1, min(window or scorer.limit, scorer.limit) - specials)
    ids = [int(i) for i in tok(text, add_special_tokens=False)["input_ids"]]
    return [partial(_masked_window, scorer, ids[s:s + size]) for s in range(0, len(ids), size)], size


def perplexity(scorer: Scorer, text: str, window: int | None = None, progress: Progress | None = None) -> Perplexity:
    """``text``'s perplexity under ``scorer``'s model (``window``: tokens per window, default its context)."""
    text = _check(text)
    jobs, size = _units(scorer, text, window)
    began, logprob, tokens, done = time.perf_counter(), 0.0, 0, 0
    notices: list[Notice] = []
    for job in jobs:
        try:
            cancel.check()
            lp, n = job()
        except cancel.RequestStopped as err:
            if err.reason == "gone" or not done:
                raise
            notices.append(Notice("stopped", f"{scorer.key} scored {done:,} of {len(jobs):,} windows ({tokens:,} "
                                             "tokens) before this request's budget ran out: the perplexity is of "
                                             "those. The command line scores the whole text."))
            break
        logprob, tokens, done = logprob + lp, tokens + n, done + 1
        if progress is not None:
            progress(done / len(jobs), f"{scorer.key}: {done:,} of {len(jobs):,} windows scored")
    whole = done == len(jobs)
    words, size_bytes = len(re.split(r"\s+", text)), len(text.encode("utf-8"))
    where = scorer.where()
    return Perplexity(scorer.key, _method(scorer), math.exp(-logprob / tokens) if tokens else math.nan, logprob,
                      tokens, done, len(jobs), size, math.exp(-logprob / words) if whole else math.nan,
                      -logprob / size_bytes / math.log(2) if whole else math.nan, time.perf_counter() - began,
                      scorer.untrained, tuple(notices), where["device"], where["device_name"], where["dtype"])


def _method(scorer: Scorer) -> str:
    if isinstance(scorer, MaskedScorer):
        return ("pseudo-perplexity (Salazar et al. 2020): every token masked in turn with its window visible; not "
                "comparable with a decoder's perplexity")
    if isinstance(scorer, ServedScorer):
        return (f"pieces of at most {SERVED_SCORED_CHARS:,} characters cut at spaces, each scored by one echo "
                "request on its own (its first token given, not scored)")
    return "rolling windows of the model's context, every token scored once (lm-eval's loglikelihood_rolling)"
