"""Extractive question answering: the answer span a SQuAD-style model reads off the context.

The model scores every context token as answer start and as answer end; the answer is the span
(i, j), i <= j < i + max_len, with the largest p_start[i] * p_end[j], mapped back to character
offsets of the context. This follows the SQuAD post-processing of transformers' old
``pipeline("question-answering")`` exactly (tested): long contexts are split into overlapping
windows and the best window wins.

>>> import torch
>>> start, end = torch.tensor([0.0, 0.1, 0.6, 0.3]), torch.tensor([0.0, 0.7, 0.1, 0.2])
>>> best_span(start, end, torch.tensor([False, True, True, True]), max_len=5)[:2]  # end never before start
(2, 3)
>>> check_qa_text("  When   was it built? ", "In 1889.")
('When was it built?', 'In 1889.')
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import torch

from explorer.architecture.modeltypes import max_input_tokens
from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.limits import QA_CONTEXT_CHARS, QA_QUESTION_CHARS
from explorer.core.notices import Notice, texts
from explorer.runtime import bundled, cancel, loading, resolve
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on
from explorer.tasks.causal.answer import answer_question

if TYPE_CHECKING:  # typing only: the generative path loads only when a decoder is asked
    from transformers import BatchEncoding

    from explorer.runtime.loading import LoadedModel
    from explorer.tasks.causal.answer import GenerativeAnswer

__all__ = [
    "QA_CHECKPOINTS", "QAResult", "answer", "ask", "best_span",
    "check_qa_text", "describe", "is_generative", "load", "model_ref", "qa_models", "qa_windows", "span_probabilities",
    "window_length",
]

# SQuAD checkpoints users are likely to have, and the catalog variant whose architecture and
# tokenizer random-weight mode uses for each (random mode needs a config, which a hub id alone lacks).
QA_CHECKPOINTS: dict[str, str] = {
    "distilbert/distilbert-base-cased-distilled-squad": "distilbert",
    "deepset/roberta-base-squad2": "roberta-base",
    "deepset/bert-base-cased-squad2": "bert-base",
}


@dataclass(frozen=True)
class QAResult:
    """The best answer span, and the start/end probabilities over the context tokens of its window."""

    model: str
    question: str
    context: str
    answer: str  # context[start_char:end_char]
    start_char: int
    end_char: int
    score: float  # p_start * p_end of the answer
    null_score: float  # p_start * p_end of [CLS], i.e. "no answer" (SQuAD 2 models)
    window: int  # which window of the context held the answer
    n_windows: int
    tokens: tuple[str, ...]  # context tokens of that window, as their text in the context
    offsets: tuple[tuple[int, int], ...]  # (start_char, end_char) of each token
    start_probs: tuple[float, ...]  # one per token
    end_probs: tuple[float, ...]
    span: tuple[int, int]  # first and last token of the answer, indexes into ``tokens``
    untrained: bool
    seconds: float
    notices: tuple[Notice, ...] = ()
    device: str = "cpu"
    kind: str = "extractive"  # a span read off the context (vs "generative": written by a decoder)
    device_name: str = "cpu"  # what ran, e.g. "cuda:0 (NVIDIA H100 80GB HBM3)"
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        for k in ("tokens", "start_probs", "end_probs", "span"):
            d[k] = list(d[k])
        d["notices"] = texts(self.notices)
        d["offsets"] = [list(o) for o in self.offsets]
        return d


def span_probabilities(start_logits: torch.Tensor, end_logits: torch.Tensor, allowed: torch.Tensor
                       ) -> tuple[torch.Tensor, torch.Tensor, float]:
    """Softmax over the answer candidates of one window, as SQuAD pipelines do.

    start_logits, end_logits: (L,); allowed: (L,) bool, True for context tokens. Position 0 ([CLS])
    also takes part in the softmax (it stands for "no answer"), then is zeroed so it is never picked.
    Returns start and end probabilities (L,) and the null score p_start[0] * p_end[0].
    """
    keep = allowed.clone()
    keep[0] = True
    start = torch.where(keep, start_logits.float(), -10000.0).softmax(-1)
    end = torch.where(keep, end_logits.float(), -10000.0).softmax(-1)
    null = float(start[0] * end[0])
    start[0] = end[0] = 0.0
    return start, end, null


def best_span(start: torch.Tensor, end: torch.Tensor, allowed: torch.Tensor, max_len: int) -> tuple[int, int, float]:
    """argmax over i <= j < i + max_len (both allowed) of start[i] * end[j] -> (i, j, score).

    start, end: (L,) probabilities; allowed: (L,) bool.
    """
    ok = allowed.float()
    outer = (start * ok)[:, None] * (end * ok)[None, :]  # (L, L)
    cand = torch.tril(torch.triu(outer), diagonal=max_len - 1)  # j >= i and j - i < max_len
    flat = int(torch.argmax(cand))
    i, j = divmod(flat, cand.shape[1])
    return i, j, float(cand[i, j])


def check_qa_text(question: str, context: str) -> tuple[str, str]:
    """Refuse empty or oversized inputs with a message; the question's whitespace is tidied,
    the context is kept verbatim so character offsets point into what the user typed."""
    q = " ".join(str(question or "").split())
    if not q:
        raise ExplorerError("The question is empty: type a question about the context.")
    if not str(context or "").strip():
        raise ExplorerError("The context is empty: paste the text that contains the answer.")
    if len(q) > QA_QUESTION_CHARS:
        raise ExplorerError(f"The question is {len(q):,} characters long; the limit is {QA_QUESTION_CHARS:,}. "
                            "Ask it in a sentence or two.")
    if len(context) > QA_CONTEXT_CHARS:
        raise ExplorerError(f"The context is {len(context):,} characters long; the limit is "
                            f"{QA_CONTEXT_CHARS:,}. Paste the relevant part only.")
    return q, str(context)


def qa_windows(tok: Tokenizer, question: str, context: str, max_length: int = 384, stride: int = 128) -> BatchEncoding:
    """Tokenize question + context into overlapping windows (only the context is split).

    Returns the BatchEncoding: input_ids (W, L) padded, offset_mapping, and sequence_ids(w) telling
    which tokens belong to the context (1). The stride shrinks for long questions so each window
    keeps room for context; a question that leaves no room is refused.
    """
    q_len = len(tok(question, add_special_tokens=False)["input_ids"])
    room = max_length - q_len - 4  # [CLS] q [SEP] c [SEP], plus one for RoBERTa's double separator
    if room < 16:
        raise ExplorerError(f"The question is {q_len} tokens; with this model's {max_length}-token window "
                            "there is no room left for the context. Shorten the question.")
    return tok(question, context, truncation="only_second", max_length=max_length,
               stride=min(stride, room // 2), return_overflowing_tokens=True,
               return_offsets_mapping=True, padding="longest", return_tensors="pt")


def _qa_logits(loaded: LoadedModel, enc: BatchEncoding) -> tuple[torch.Tensor, torch.Tensor]:
    """Start and end logits (W, L) for every window, 8 windows per forward pass."""
    names = [n for n in loaded.tokenizer.model_input_names if n in enc]  # DistilBERT takes no token_type_ids
    device = input_device(loaded.model)  # where the model is, whatever ``loaded`` claims
    starts, ends = [], []
    with torch.inference_mode():
        for lo in range(0, enc["input_ids"].shape[0], 8):
            cancel.check()  # a request stopped by its budget or gone frees its worker between batches
            out = loaded.model(**{n: enc[n][lo : lo + 8].to(device) for n in names})
            starts.append(out.start_logits.float().cpu())
            ends.append(out.end_logits.float().cpu())
    return torch.cat(starts), torch.cat(ends)


def window_length(loaded: LoadedModel) -> int:
    """Window length: 384 like the SQuAD pipelines, unless the model takes fewer positions."""
    positions = max_input_tokens(loaded.model.config) or 512  # RoBERTa-style offsets taken off
    return min(384, positions, int(loaded.tokenizer.model_max_length))


def _context_mask(enc: BatchEncoding, w: int) -> torch.Tensor:
    """(L,) bool: True where window w holds a context token (not question, special or padding)."""
    seq = enc.sequence_ids(w)
    return torch.tensor([s == 1 for s in seq]) & enc["attention_mask"][w].bool()


def answer(loaded: LoadedModel, question: str, context: str, max_answer_len: int = 30) -> QAResult:
    """The best answer span of ``context`` for ``question`` with an extractive QA model."""
    if not hasattr(loaded.model, "qa_outputs") and "QuestionAnswering" not in type(loaded.model).__name__:
        raise ExplorerError(f"{getattr(loaded, 'key', 'This model')} has no question-answering head: load it "
                            "with task 'question-answering' (a SQuAD checkpoint, or random weights).")
    q, ctx = check_qa_text(question, context)
    started = time.perf_counter()
    enc = qa_windows(loaded.tokenizer, q, ctx, window_length(loaded))
    start_logits, end_logits = _qa_logits(loaded, enc)  # (W, L) each
    best: tuple[float, int, int, int, torch.Tensor, torch.Tensor, float] | None = None
    for w in range(start_logits.shape[0]):
        allowed = _context_mask(enc, w)
        if not allowed.any():
            continue
        sp, ep, null = span_probabilities(start_logits[w], end_logits[w], allowed)
        i, j, score = best_span(sp, ep, allowed, max(1, int(max_answer_len)))
        if best is None or score > best[0]:
            best = (score, w, i, j, sp, ep, null)
    if best is None:
        raise ExplorerError("The context produced no tokens: paste some text that contains the answer.")
    return _qa_result(loaded, q, ctx, enc, best, start_logits.shape[0], time.perf_counter() - started)


def _qa_result(loaded: LoadedModel, q: str, ctx: str, enc: BatchEncoding, best: tuple, n_windows: int,
               seconds: float) -> QAResult:
    """Map the winning (window, i, j) to characters, and collect that window's probability strip."""
    score, w, i, j, sp, ep, null = best
    idx = _context_mask(enc, w).nonzero().flatten().tolist()  # token positions of the context
    offsets = [(int(enc["offset_mapping"][w][t][0]), int(enc["offset_mapping"][w][t][1])) for t in idx]
    s_char, e_char = int(enc["offset_mapping"][w][i][0]), int(enc["offset_mapping"][w][j][1])
    notices = []
    if n_windows > 1:
        notices.append(Notice("truncated", f"The context was split into {n_windows} overlapping windows; "
                              f"the answer comes from window {w + 1}, whose tokens are shown."))
    if null > score:
        notices.append(Notice("info", f"The model rates 'no answer' ({null:.3f}) above its best span ({score:.3f})."))
    name = str(getattr(loaded, "name", None) or getattr(loaded, "key", "model"))
    return QAResult(name, q, ctx, ctx[s_char:e_char], s_char, e_char, float(score), float(null), w,
                    n_windows, tuple(ctx[a:b] for a, b in offsets), tuple(offsets),
                    tuple(float(sp[t]) for t in idx), tuple(float(ep[t]) for t in idx),
                    (idx.index(i), idx.index(j)), bool(getattr(loaded, "untrained", False)),
                    round(seconds, 4), tuple(notices), **ran_on(loaded))


def model_ref(model: str, models_dir: str | None = None, random_weights: bool = False) -> resolve.ModelRef:
    """A QA model named by a hub id, key or directory, resolved once (the page and the CLI call this); untrained
    weights are built from the catalog architecture of a SQuAD checkpoint (:data:`QA_CHECKPOINTS`: random mode
    needs a config, which a hub id alone lacks)."""
    name = QA_CHECKPOINTS.get(model, model) if random_weights else model
    return resolve.resolve(name, models_dir, random_weights=random_weights)


def load(ref: resolve.ModelRef, *, device: str | None = None, dtype: str | None = None) -> LoadedModel:
    """The extractive QA model ``ref`` (:func:`model_ref`) on ``device`` in ``dtype``."""
    return loading.load_model(ref, "question-answering", device=device, dtype=dtype, purpose="Question answering")


def qa_models() -> list[str]:
    """What the QA tab offers: the bundled decoder first (it answers offline, generatively), then the
    SQuAD checkpoints (extractive, once downloaded)."""
    return [bundled.KEY, *QA_CHECKPOINTS]


def is_generative(ref: resolve.ModelRef) -> bool:
    """Whether the model writes its answer (a decoder, :class:`explorer.runtime.resolve.ModelRef`) rather than
    pointing at a span."""
    return ref.decoder


def describe(model: str) -> str:
    """How the model picker names a QA model.

    >>> describe("gemma3-270m"), describe("deepset/roberta-base-squad2")
    ('gemma3-270m: generative (decoder)', 'deepset/roberta-base-squad2: extractive (SQuAD reader)')
    """
    generative = is_generative(resolve.resolve(model))  # the picker's label: the choice is resolved once picked
    return f"{model}: {'generative (decoder)' if generative else 'extractive (SQuAD reader)'}"


def ask(ref: resolve.ModelRef, question: str, context: str, max_answer_len: int = 30, *,
        device: str | None = None, dtype: str | None = None) -> QAResult | GenerativeAnswer:
    """Load the model ``ref`` (:func:`model_ref`) and answer: bad input is refused before any model is loaded.

    A decoder writes its answer (:func:`explorer.tasks.causal.answer.answer_question`, located in
    the context when it occurs there); anything else is an extractive reader.
    """
    check_qa_text(question, context)
    if is_generative(ref):
        return answer_question(loading.load_model(ref, "causal-lm", device=device, dtype=dtype), question, context)
    return answer(load(ref, device=device, dtype=dtype), question, context, max_answer_len)
