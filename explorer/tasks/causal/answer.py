"""Generative question answering with a decoder: the answer is written, then looked up in the context.

An extractive reader (BERT on SQuAD) can only point at a span of the context. A decoder writes
its answer token by token after a prompt holding the context and the question, so the answer
may or may not occur in the context: when it does, its character offsets are returned for
highlighting; either way the result is labelled ``generative``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.limits import DECODER_QA_CONTEXT_CHARS, DECODER_QA_QUESTION_CHARS
from explorer.core.notices import Notice, texts
from explorer.core.userinput import require_text
from explorer.runtime import cancel
from explorer.runtime.placement import ran_on
from explorer.tasks.generation.decoder import TokenDecoder
from explorer.tasks.generation.prompt import context_limit
from explorer.tasks.generation.strategy import DecodingSettings

if TYPE_CHECKING:  # typing only: no runtime import of the loader
    from explorer.runtime.loading import LoadedModel

__all__ = ["MAX_ANSWER_TOKENS", "PROMPT", "GenerativeAnswer", "answer_question", "locate", "locate_part", "qa_prompt"]

# One worked example first: a small decoder then answers with words of the context, not a sentence
# (Gemma 3 270M on the Eiffel Tower page: "1889" with it, "The Eiffel Tower was built in 1889." without).
PROMPT = ("Answer the question with a few words from the context.\n\n"
          "Context: Marie Curie was born in Warsaw in 1867 and moved to Paris in 1891.\n"
          "Question: Where was Marie Curie born?\nAnswer: Warsaw\n\n"
          "Context: {context}\nQuestion: {question}\nAnswer:")
MAX_ANSWER_TOKENS = 24  # a short answer, not an essay


@dataclass(frozen=True)
class GenerativeAnswer:
    model: str
    question: str
    context: str
    answer: str  # the generated text, first line, stripped
    start: int | None  # character offsets of the answer in ``context`` (None: not found there)
    end: int | None
    token_ids: tuple[int, ...]
    notices: tuple[Notice, ...]
    latency_ms: float
    kind: str = "generative"  # vs extractive (a span picked from the context)
    untrained: bool = False
    device: str = "cpu"
    match: str = "whole"  # where start/end point: the "whole" answer, the longest "part" found, or "none"
    device_name: str = "cpu"  # what ran, e.g. "cuda:0 (NVIDIA H100 80GB HBM3)"
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        del out["notices"]
        out["notice"] = " ".join(texts(self.notices))
        return out


def locate(answer: str, context: str) -> tuple[int, int] | None:
    """Character offsets of ``answer`` in ``context`` (case-insensitive, end punctuation ignored).

    >>> locate("Paris.", "The capital is paris, of course.")
    (15, 20)
    """
    needle = answer.strip().rstrip(".!?,;:").strip()
    if not needle:
        return None
    at = context.lower().find(needle.lower())
    return (at, at + len(needle)) if at >= 0 else None


def locate_part(answer: str, context: str) -> tuple[int, int] | None:
    """The longest run of the answer's words found in the context, when the whole answer is not there.

    A run needs one word of 4+ letters: "It is" alone would match almost any text.

    >>> context = "The tower stands on the Champ de Mars in Paris."
    >>> locate_part("It is located in the Champ de Mars, a park.", context)
    (20, 37)
    >>> locate_part("It is.", context) is None
    True
    """
    words = [w.strip(".,;:!?()\"'") for w in answer.split()]
    for size in range(len(words), 0, -1):
        for i in range(len(words) - size + 1):
            run = words[i:i + size]
            if max(len(w) for w in run) >= 4 and (span := locate(" ".join(run), context)):
                return span
    return None


def qa_prompt(tokenizer: Tokenizer, question: str, context: str, limit: int) -> tuple[list[int], Notice | None]:
    """Prompt ids with the context cut (at its end) so prompt + answer fit ``limit`` tokens."""
    full = list(tokenizer(PROMPT.format(context=context, question=question))["input_ids"])
    if len(full) + MAX_ANSWER_TOKENS <= limit:
        return full, None
    ctx = list(tokenizer(context, add_special_tokens=False)["input_ids"])
    keep = max(0, len(ctx) - (len(full) + MAX_ANSWER_TOKENS - limit))
    if keep == 0:
        raise ExplorerError("The question alone fills the model's window: shorten the question.")
    short = tokenizer.decode(ctx[:keep], skip_special_tokens=True)
    note = Notice("truncated", f"The context was cut to its first {keep:,} tokens to fit the model's "
                               f"{limit:,}-token window.")
    return list(tokenizer(PROMPT.format(context=short, question=question))["input_ids"]), note


def _generate(loaded: LoadedModel, ids: list[int]) -> tuple[str, tuple[int, ...], Notice | None]:
    """The answer's first line, its token ids, and (anytime) a notice when the request's time ended it early: the
    tokens written so far are the answer then; a closed page, or a stop before the first token, still raises."""
    decoder = TokenDecoder(loaded.model, loaded.tokenizer, tuple(ids),
                           DecodingSettings("greedy", max_new_tokens=MAX_ANSWER_TOKENS))
    cut = None
    while not decoder.finished:
        try:
            decoder.step()
        except cancel.RequestStopped as err:
            if err.reason == "gone" or not decoder.token_ids:
                raise
            cut = Notice("stopped", f"{err} The answer is the {len(decoder.token_ids)} token(s) written before "
                                    "the stop (it may be cut short).")
            break
        text = loaded.tokenizer.decode(decoder.token_ids, skip_special_tokens=True)
        if "\n" in text.lstrip():  # one line is the answer; the model would go on with a new question
            break
    text = loaded.tokenizer.decode(decoder.token_ids, skip_special_tokens=True)
    return text.strip().split("\n")[0].strip(), tuple(decoder.token_ids), cut


def answer_question(loaded: LoadedModel, question: str, context: str) -> GenerativeAnswer:
    """The decoder's answer to ``question`` from ``context`` (``explorer.runtime.loading.LoadedModel``)."""
    begin = time.perf_counter()
    question = require_text(question, what="question", empty_hint="type a question about the context.",
                            max_chars=DECODER_QA_QUESTION_CHARS, limit_note="a question is a sentence or two")
    context = require_text(context, what="context", empty_hint="paste a paragraph that holds the answer.",
                           max_chars=DECODER_QA_CONTEXT_CHARS,
                           limit_note="longer contexts are cut to the model's window anyway")
    ids, cut = qa_prompt(loaded.tokenizer, question, context, context_limit(loaded.model))
    answer, token_ids, stopped = _generate(loaded, ids)
    span, match = locate(answer, context), "whole"
    notices = [n for n in (cut, stopped) if n]
    if span is None:
        span, match = locate_part(answer, context), "part"
        found = f": only “{context[span[0]:span[1]]}” does (highlighted)" if span else ""
        notices.append(Notice("info", f"The generated answer does not occur word for word in the context{found}."))
    match = match if span else "none"
    if loaded.untrained:
        notices.append(Notice("untrained", "Untrained weights: predictions are noise."))
    return GenerativeAnswer(loaded.key, question, context, answer, span[0] if span else None,
                            span[1] if span else None, token_ids, tuple(notices), (time.perf_counter() - begin) * 1000,
                            untrained=loaded.untrained, match=match, **ran_on(loaded))
