"""Span demos: T5 sentinel infilling, BART <mask> infilling, and extractive question answering.

Infilling: the user marks missing spans with ``___`` (or a model's own marker). T5 was pretrained
to output ``<extra_id_0> span0 <extra_id_1> span1 ...`` for a prompt with sentinels; BART to
output the whole repaired text, so its spans are found by aligning the output with the prompt.
Either way the result is the prompt with each generated span placed back, marked by blank index.

Extractive QA: the model scores every context token as answer start and as answer end; the answer
is the span (i, j), i <= j < i + max_len, with the largest p_start[i] * p_end[j], mapped back to
character offsets of the context. This follows ``pipeline("question-answering")`` exactly
(tested): long contexts are split into overlapping windows and the best window wins.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from typing import Any

import torch

from explorer.errors import ExplorerError

GENERIC_BLANK = "___"
# What counts as a blank in a prompt: the generic marker (3+ underscores) or any model's own.
BLANK_RE = re.compile(r"_{3,}|<extra_id_\d+>|<mask>|\[MASK\]")
SENTINEL_RE = re.compile(r"(<extra_id_\d+>)")
MAX_BLANKS = 20
MAX_PROMPT_CHARS = 4_000
MAX_QUESTION_CHARS = 1_000
MAX_CONTEXT_CHARS = 20_000  # about 5,000 tokens, i.e. ~20 windows of 384 tokens
T5_TYPES = ("t5", "mt5", "umt5", "longt5")
BART_TYPES = ("bart", "mbart", "plbart")


@dataclass(frozen=True)
class Segment:
    """A piece of the filled-in text: the user's words (span None) or generated span number ``span``."""

    text: str
    span: int | None


@dataclass(frozen=True)
class InfillResult:
    model: str
    family: str  # "t5" | "bart"
    prompt: str  # as typed
    model_input: str  # with the model's own markers
    raw_output: str  # decoded generation, special markers kept
    spans: tuple[str, ...]  # text generated for each blank, in order
    segments: tuple[Segment, ...]  # prompt pieces and spans interleaved, for highlighting
    aligned: bool  # False: BART rewrote the text and its spans could not be located
    untrained: bool
    seconds: float
    notices: tuple[str, ...] = ()

    @property
    def filled(self) -> str:
        return "".join(s.text for s in self.segments)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["spans"], d["notices"] = list(self.spans), list(self.notices)
        d["segments"], d["filled"] = [asdict(s) for s in self.segments], self.filled
        return d


def split_blanks(prompt: str) -> tuple[str, ...]:
    """The text between blanks: n blanks -> n + 1 pieces (possibly empty). Validates the prompt."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise ExplorerError(f"The prompt is empty: type a sentence and mark missing spans with {GENERIC_BLANK}.")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise ExplorerError(f"The prompt is {len(prompt):,} characters long; the limit is "
                            f"{MAX_PROMPT_CHARS:,}. Shorten it around the blanks.")
    pieces = tuple(BLANK_RE.split(prompt))
    n = len(pieces) - 1
    if n == 0:
        raise ExplorerError(f"No blank in the prompt: mark each missing span with {GENERIC_BLANK} "
                            "(or <extra_id_0> for T5, <mask> for BART).")
    if n > MAX_BLANKS:
        raise ExplorerError(f"{n} blanks in the prompt; the limit is {MAX_BLANKS}. Remove some.")
    return pieces


def family(loaded: Any) -> str:
    """"t5" or "bart" from the model's config; anything else cannot infill spans."""
    mtype = str(getattr(loaded.model.config, "model_type", ""))
    if mtype in T5_TYPES:
        return "t5"
    if mtype in BART_TYPES:
        return "bart"
    raise ExplorerError(f"{getattr(loaded, 'key', 'This model')} is a {mtype!r} model: span infilling needs "
                        "a T5 (sentinels) or BART (<mask>) checkpoint.")


def parse_sentinels(text: str, n_blanks: int) -> tuple[list[str], list[str]]:
    """T5 output "<extra_id_0> a <extra_id_1> b </s>" -> (["a", "b"], notices).

    Spans come back in sentinel order; a sentinel the model never produced leaves its blank
    empty (with a notice), and text after the last wanted sentinel is ignored.
    """
    spans: dict[int, str] = {}
    parts = SENTINEL_RE.split(text)
    for marker, body in zip(parts[1::2], parts[2::2], strict=False):
        idx = int(marker[len("<extra_id_") : -1])
        if idx < n_blanks and idx not in spans:
            spans[idx] = body.replace("</s>", "").replace("<pad>", "").strip()
    missing = [i for i in range(n_blanks) if i not in spans]
    if len(missing) == n_blanks:  # typical of an untrained model: say it once, point at the raw output
        return [""] * n_blanks, ["The output contains no sentinel (<extra_id_0>, ...), so no span could be "
                                 "placed back: see the raw output."]
    notices = [f"The model produced no text for blank {i + 1}." for i in missing]
    return [spans.get(i, "") for i in range(n_blanks)], notices


def align_spans(pieces: tuple[str, ...], output: str) -> list[str] | None:
    """Find what BART wrote into each blank by locating the prompt pieces, in order, in its output.

    Whitespace is compared loosely (BART re-spaces text); a piece that followed a space in the
    prompt must start a word in the output, so a short piece like "a" does not match inside "sat".
    Returns one span per blank, or None when the output does not contain the prompt's words in
    order (the model rewrote them, as an untrained model does).
    """
    out = " ".join(output.split())
    anchors = [" ".join(p.split()) for p in pieces]
    if not out.startswith(anchors[0]):
        return None
    cursor, spans, run = len(anchors[0]), [], 0  # run: blanks waiting for the next non-empty piece
    for i, anchor in enumerate(anchors[1:], start=1):
        run += 1
        if i == len(anchors) - 1:  # the last piece must end the output
            idx = len(out) - len(anchor)
            if idx < cursor or not out.endswith(anchor):
                return None
        elif not anchor:  # adjacent blanks: the text goes to the first of them, the others stay empty
            continue
        else:
            word = " " + anchor if pieces[i][:1].isspace() else anchor
            idx = out.find(word, cursor)
            if idx < 0:
                return None
            idx += len(word) - len(anchor)
        spans += [out[cursor:idx].strip()] + [""] * (run - 1)
        cursor, run = idx + len(anchor), 0
    return spans


def _segments(pieces: tuple[str, ...], spans: list[str]) -> tuple[Segment, ...]:
    """Prompt pieces with the spans placed back between them."""
    out: list[Segment] = []
    for i, piece in enumerate(pieces):
        if piece:
            out.append(Segment(piece, None))
        if i < len(spans):
            out.append(Segment(spans[i], i))
    return tuple(out)


def _encode_prompt(loaded: Any, text: str) -> dict[str, torch.Tensor]:
    """Tokenize a prompt, refusing (not truncating) one longer than the model accepts: cutting it
    could drop blanks."""
    tok = loaded.tokenizer
    enc = tok(text, return_tensors="pt")
    cfg = loaded.model.config
    limit = min(int(getattr(cfg, "max_position_embeddings", 0) or 512), int(tok.model_max_length), 1024)
    n = int(enc["input_ids"].shape[1])
    if n > limit:
        raise ExplorerError(f"The prompt is {n} tokens; this model takes at most {limit}. Shorten it.")
    device = str(getattr(loaded, "device", "cpu"))
    return {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}


def _generate(loaded: Any, enc: dict[str, torch.Tensor], **kwargs: Any) -> torch.Tensor:
    """Greedy/beam generation without gradients -> (1, T_out) token ids."""
    with torch.inference_mode():
        return loaded.model.generate(**enc, do_sample=False, **kwargs)


def _infill_t5(loaded: Any, pieces: tuple[str, ...], max_new_tokens: int) -> tuple[str, str, list[str], list[str]]:
    """T5: blanks become <extra_id_i>; the output lists the spans after their sentinels."""
    tok, n = loaded.tokenizer, len(pieces) - 1
    text = "".join(p + (f"<extra_id_{i}>" if i < n else "") for i, p in enumerate(pieces))
    extra: dict[str, Any] = {}
    notices: list[str] = []
    if getattr(loaded, "untrained", False):  # a random T5 repeats <pad> forever: forbid it so output shows
        extra["suppress_tokens"] = [tok.pad_token_id]
        notices.append("Untrained weights: <pad> was suppressed so that the output is visible.")
    # The decoder starts from "<pad> <extra_id_0>": a trained T5 always begins its answer with the first
    # sentinel anyway, and forcing it lets even an untrained model show where span 1 goes.
    start = int(getattr(loaded.model.config, "decoder_start_token_id", None) or tok.pad_token_id or 0)
    prefix = torch.tensor([[start, tok.convert_tokens_to_ids("<extra_id_0>")]],
                          device=str(getattr(loaded, "device", "cpu")))
    out = _generate(loaded, _encode_prompt(loaded, text), decoder_input_ids=prefix,
                    max_new_tokens=max_new_tokens, num_beams=1, **extra)
    raw = tok.decode(out[0], skip_special_tokens=False)
    spans, missing = parse_sentinels(raw, n)
    return text, raw, spans, notices + missing


def _infill_bart(loaded: Any, pieces: tuple[str, ...], max_new_tokens: int) -> tuple[str, str, list[str] | None, str]:
    """BART: blanks become <mask>; the model writes the whole text, the spans are aligned back."""
    tok = loaded.tokenizer
    text = tok.mask_token.join(pieces)
    enc = _encode_prompt(loaded, text)
    n_in = int(enc["input_ids"].shape[1])
    out = _generate(loaded, enc, max_new_tokens=n_in + max_new_tokens, num_beams=4, early_stopping=True)
    raw = tok.decode(out[0], skip_special_tokens=False)
    plain = tok.decode(out[0], skip_special_tokens=True)
    return text, raw, align_spans(pieces, plain), plain


def infill(loaded: Any, prompt: str, max_new_tokens: int = 24) -> InfillResult:
    """Fill every blank of ``prompt`` with a T5 or BART model (whichever ``loaded`` is).

    ``max_new_tokens`` is per blank (1..128).
    """
    pieces = split_blanks(prompt)
    fam = family(loaded)
    # the budget is per blank: each span, plus its sentinel, may use up to max_new_tokens
    max_new_tokens = max(1, min(int(max_new_tokens), 128)) * (len(pieces) - 1) + len(pieces)
    start = time.perf_counter()
    if fam == "t5":
        text, raw, spans, notices = _infill_t5(loaded, pieces, max_new_tokens)
        segments, aligned = _segments(pieces, spans), True
    else:
        text, raw, found, plain = _infill_bart(loaded, pieces, max_new_tokens)
        aligned, notices = found is not None, []
        spans = found or []
        segments = _segments(pieces, spans) if aligned else (Segment(plain, None),)
        if not aligned:
            notices.append("BART rewrote the text, so its spans could not be located: showing its whole output.")
    name = str(getattr(loaded, "name", None) or getattr(loaded, "key", "model"))
    return InfillResult(name, fam, prompt, text, raw, tuple(spans), segments, aligned,
                        bool(getattr(loaded, "untrained", False)), round(time.perf_counter() - start, 4),
                        tuple(notices))


# ---------------------------------------------------------------- extractive question answering


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
    notices: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k in ("tokens", "start_probs", "end_probs", "span", "notices"):
            d[k] = list(d[k])
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
    if len(q) > MAX_QUESTION_CHARS:
        raise ExplorerError(f"The question is {len(q):,} characters long; the limit is {MAX_QUESTION_CHARS:,}.")
    if len(context) > MAX_CONTEXT_CHARS:
        raise ExplorerError(f"The context is {len(context):,} characters long; the limit is "
                            f"{MAX_CONTEXT_CHARS:,}. Paste the relevant part only.")
    return q, str(context)


def qa_windows(tok: Any, question: str, context: str, max_length: int = 384, stride: int = 128) -> Any:
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


def _qa_logits(loaded: Any, enc: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """Start and end logits (W, L) for every window, 8 windows per forward pass."""
    names = [n for n in loaded.tokenizer.model_input_names if n in enc]  # DistilBERT takes no token_type_ids
    device = str(getattr(loaded, "device", "cpu"))
    starts, ends = [], []
    with torch.inference_mode():
        for lo in range(0, enc["input_ids"].shape[0], 8):
            out = loaded.model(**{n: enc[n][lo : lo + 8].to(device) for n in names})
            starts.append(out.start_logits.float().cpu())
            ends.append(out.end_logits.float().cpu())
    return torch.cat(starts), torch.cat(ends)


def _qa_limit(loaded: Any) -> int:
    """Window length: 384 like the SQuAD pipelines, unless the model takes fewer positions."""
    cfg = loaded.model.config
    positions = int(getattr(cfg, "max_position_embeddings", 512) or 512)
    if str(getattr(cfg, "model_type", "")) in ("roberta", "xlm-roberta", "camembert"):
        positions -= 2  # RoBERTa's positions start at padding_idx + 1
    return min(384, positions, int(loaded.tokenizer.model_max_length))


def _context_mask(enc: Any, w: int) -> torch.Tensor:
    """(L,) bool: True where window w holds a context token (not question, special or padding)."""
    seq = enc.sequence_ids(w)
    return torch.tensor([s == 1 for s in seq]) & enc["attention_mask"][w].bool()


def answer(loaded: Any, question: str, context: str, max_answer_len: int = 30) -> QAResult:
    """The best answer span of ``context`` for ``question`` with an extractive QA model."""
    if not hasattr(loaded.model, "qa_outputs") and "QuestionAnswering" not in type(loaded.model).__name__:
        raise ExplorerError(f"{getattr(loaded, 'key', 'This model')} has no question-answering head: load it "
                            "with task 'question-answering' (a SQuAD checkpoint, or random weights).")
    q, ctx = check_qa_text(question, context)
    started = time.perf_counter()
    enc = qa_windows(loaded.tokenizer, q, ctx, _qa_limit(loaded))
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


def _qa_result(loaded: Any, q: str, ctx: str, enc: Any, best: tuple, n_windows: int, seconds: float) -> QAResult:
    """Map the winning (window, i, j) to characters, and collect that window's probability strip."""
    score, w, i, j, sp, ep, null = best
    idx = _context_mask(enc, w).nonzero().flatten().tolist()  # token positions of the context
    offsets = [tuple(int(v) for v in enc["offset_mapping"][w][t].tolist()) for t in idx]
    s_char, e_char = int(enc["offset_mapping"][w][i][0]), int(enc["offset_mapping"][w][j][1])
    notices = []
    if n_windows > 1:
        notices.append(f"The context was split into {n_windows} overlapping windows; "
                       f"the answer comes from window {w + 1}, whose tokens are shown.")
    if null > score:
        notices.append(f"The model rates 'no answer' ({null:.3f}) above its best span ({score:.3f}).")
    name = str(getattr(loaded, "name", None) or getattr(loaded, "key", "model"))
    return QAResult(name, q, ctx, ctx[s_char:e_char], s_char, e_char, float(score), float(null), w,
                    n_windows, tuple(ctx[a:b] for a, b in offsets), tuple(offsets),
                    tuple(float(sp[t]) for t in idx), tuple(float(ep[t]) for t in idx),
                    (idx.index(i), idx.index(j)), bool(getattr(loaded, "untrained", False)),
                    round(seconds, 4), tuple(notices))
