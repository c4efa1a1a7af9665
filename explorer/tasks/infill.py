"""Span infilling: T5 sentinels and BART ``<mask>``, the generated spans placed back into the prompt.

The user marks missing spans with ``___`` (or a model's own marker). T5 was pretrained to output
``<extra_id_0> span0 <extra_id_1> span1 ...`` for a prompt with sentinels; BART to output the whole
repaired text, so its spans are found by aligning the output with the prompt. Either way the result
is the prompt with each generated span placed back, marked by blank index.

>>> span_pieces("Thank you ___ me to your party <extra_id_1> week.")
('Thank you ', ' me to your party ', ' week.')
>>> parse_sentinels("<pad> <extra_id_0> for inviting <extra_id_1> last</s>", 2)
(['for inviting', 'last'], [])
>>> align_spans(("The cat ", " on the mat."), "The cat sat on the mat.")
['sat']
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import torch

from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import SPAN_PROMPT_CHARS
from explorer.core.notices import Notice, texts
from explorer.core.userinput import GENERIC_BLANK, SENTINEL, SPAN_MARKER, split_blanks
from explorer.runtime import cancel, loading, modelkind, resolve
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on
from explorer.tasks.causal.fill import DECODER_MAX_BLANKS, CausalFill, causal_fill

if TYPE_CHECKING:  # typing only: no runtime import of the loader
    from explorer.runtime.loading import LoadedModel

__all__ = [
    "BART_TYPES", "CAUSAL_SPAN_TOKENS", "INFILLERS", "SEQ2SEQ_MAX_BLANKS", "T5_TYPES", "Filled",
    "InfillResult", "Segment", "align_spans", "family", "infill",
    "parse_sentinels", "ranking_note", "run", "segments", "span_pieces", "task",
]

SENTINEL_RE = re.compile(f"({SENTINEL})")  # in the model's output, exactly as its tokenizer spells it
# T5 and BART fill every blank in one generation, so the cap is about a readable answer, not time
# (a decoder's is lower: explorer.tasks.causal.fill.DECODER_MAX_BLANKS, one pass per blank).
SEQ2SEQ_MAX_BLANKS = 20
T5_TYPES = ("t5", "mt5", "umt5", "longt5")
BART_TYPES = ("bart", "mbart", "plbart")
CAUSAL_SPAN_TOKENS = 4  # a decoder's answer per blank: up to 4 tokens (each one a beam step over the text)


@dataclass(frozen=True)
class Segment:
    """A piece of the filled-in text: the user's words (span None) or generated span number ``span``."""

    text: str
    span: int | None


@dataclass(frozen=True)
class InfillResult:
    model: str
    family: str  # "t5" | "bart" | "causal" (a decoder)
    prompt: str  # as typed
    model_input: str  # with the model's own markers
    raw_output: str  # decoded generation, special markers kept
    spans: tuple[str, ...]  # text generated for each blank, in order
    segments: tuple[Segment, ...]  # prompt pieces and spans interleaved, for highlighting
    aligned: bool  # False: BART rewrote the text and its spans could not be located
    untrained: bool
    seconds: float
    notices: tuple[Notice, ...] = ()
    device: str = "cpu"
    device_name: str = "cpu"  # what ran, e.g. "cuda:0 (NVIDIA H100 80GB HBM3)"
    dtype: str = "float32"

    @property
    def filled(self) -> str:
        return "".join(s.text for s in self.segments)

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["spans"], d["notices"] = list(self.spans), texts(self.notices)
        d["segments"], d["filled"] = [asdict(s) for s in self.segments], self.filled
        return d


def span_pieces(prompt: object, decoder: bool = False) -> tuple[str, ...]:
    """The prompt's pieces between blanks (:func:`explorer.core.userinput.split_blanks`, T5 sentinels
    included), within the cap of the model that fills them: a decoder's is lower (one pass per blank)."""
    cap, why = ((DECODER_MAX_BLANKS, "a decoder reads the text once per blank") if decoder
                else (SEQ2SEQ_MAX_BLANKS, "more spans than this no longer read as one answer"))
    return split_blanks(prompt, what="prompt", marker=SPAN_MARKER, max_blanks=cap, max_chars=SPAN_PROMPT_CHARS,
                        why_cap=why)


def family(loaded: LoadedModel) -> str:
    """"t5", "bart" or "causal" (a decoder) from the model's config; anything else cannot infill spans."""
    mtype = str(getattr(loaded.model.config, "model_type", ""))
    if mtype in T5_TYPES:
        return "t5"
    if mtype in BART_TYPES:
        return "bart"
    if modelkind.config_family({"model_type": mtype}) == "decoder":  # gpt2, gemma3_text; not BERT's LM head
        return "causal"
    raise ExplorerError(f"{getattr(loaded, 'key', 'This model')} is a {shorten(mtype)!r} model: span infilling needs "
                        "a T5 (sentinels), BART (<mask>) or decoder (causal LM) checkpoint.")


def parse_sentinels(text: str, n_blanks: int,
                    specials: tuple[str, ...] = ("</s>", "<pad>")) -> tuple[list[str], list[str]]:
    """T5 output "<extra_id_0> a <extra_id_1> b </s>" -> (["a", "b"], notices).

    Spans come back in sentinel order; a sentinel the model never produced leaves its blank
    empty (with a notice), and text after the last wanted sentinel is ignored. ``specials`` are
    the tokenizer's end and padding tokens, removed from a span (a T5 the pretraining lab trained
    ends with ``[SEP]`` and pads with ``[PAD]``).
    """
    spans: dict[int, str] = {}
    parts = SENTINEL_RE.split(text)
    for marker, body in zip(parts[1::2], parts[2::2], strict=False):
        idx = int(marker[len("<extra_id_") : -1])
        if idx < n_blanks and idx not in spans:
            for special in specials:
                body = body.replace(special, "")
            spans[idx] = body.strip()
    missing = [i for i in range(n_blanks) if i not in spans]
    if len(missing) == n_blanks:  # typical of an untrained model: say it once, point at the raw output
        return [""] * n_blanks, ["The output contains no sentinel (<extra_id_0>, ...), so no span could be "
                                 "placed back: see the raw output."]
    notices = [f"The model produced no text for blank {i + 1}." for i in missing]
    return [spans.get(i, "") for i in range(n_blanks)], notices


def align_spans(pieces: tuple[str, ...], output: str, ignore_case: bool = False) -> list[str] | None:
    """Find what BART wrote into each blank by locating the prompt pieces, in order, in its output.

    Whitespace is compared loosely (BART re-spaces text); a piece that followed a space in the
    prompt must start a word in the output, so a short piece like "a" does not match inside "sat".
    Returns one span per blank, or None when the output does not contain the prompt's words in
    order (the model rewrote them, as an untrained model does). ``ignore_case``: an uncased
    tokenizer (the pretraining lab's) writes "the cat" for "The cat".

    >>> align_spans(("The cat ", " on the mat."), "the cat sat on the mat.", ignore_case=True)
    ['sat']
    """
    out = " ".join(output.split())
    anchors = [" ".join(p.split()) for p in pieces]
    hay = out  # searched; the spans are cut from ``out`` at the same offsets
    if ignore_case and len(out.lower()) == len(out) and all(len(a.lower()) == len(a) for a in anchors):
        hay, anchors = out.lower(), [a.lower() for a in anchors]  # lengths kept: offsets stay valid
    if not hay.startswith(anchors[0]):
        return None
    cursor, spans, run = len(anchors[0]), [], 0  # run: blanks waiting for the next non-empty piece
    for i, anchor in enumerate(anchors[1:], start=1):
        run += 1
        if i == len(anchors) - 1:  # the last piece must end the output
            idx = len(out) - len(anchor)
            if idx < cursor or not hay.endswith(anchor):
                return None
        elif not anchor:  # adjacent blanks: the text goes to the first of them, the others stay empty
            continue
        else:
            word = " " + anchor if pieces[i][:1].isspace() else anchor
            idx = hay.find(word, cursor)
            if idx < 0:
                return None
            idx += len(word) - len(anchor)
        spans += [out[cursor:idx].strip()] + [""] * (run - 1)
        cursor, run = idx + len(anchor), 0
    return spans


def segments(pieces: tuple[str, ...], spans: list[str]) -> tuple[Segment, ...]:
    """Prompt pieces with the spans placed back between them; a blank without a span stays ``___``.

    >>> [(s.text, s.span) for s in segments(("Thank you", " me to your party", " week."), ["for taking"])]
    [('Thank you', None), ('for taking', 0), (' me to your party', None), ('___', None), (' week.', None)]
    """
    out: list[Segment] = []
    for i, piece in enumerate(pieces):
        if piece:
            out.append(Segment(piece, None))
        if i < len(spans):
            out.append(Segment(spans[i], i))
        elif i < len(pieces) - 1:  # a blank left open (the request's time ran out before it)
            out.append(Segment("___", None))
    return tuple(out)


def _encode_prompt(loaded: LoadedModel, text: str) -> dict[str, torch.Tensor]:
    """Tokenize a prompt, refusing (not truncating) one longer than the model accepts: cutting it
    could drop blanks."""
    tok = loaded.tokenizer
    enc = tok(text, return_tensors="pt")
    cfg = loaded.model.config
    limit = min(int(getattr(cfg, "max_position_embeddings", 0) or 512), int(tok.model_max_length), 1024)
    n = int(enc["input_ids"].shape[1])
    if n > limit:
        raise ExplorerError(f"The prompt is {n} tokens; this model takes at most {limit}. Shorten it.")
    device = input_device(loaded.model)  # where the model is, whatever ``loaded`` claims
    return {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}


class _Anytime:
    """A stopping criterion that lets a server request's token end ``generate`` at its next step (anytime: the
    tokens so far are kept, :attr:`stopped` says why; a closed page, or a stop before the first token, raises)."""

    def __init__(self, start: int) -> None:
        self.start = start  # the output's length before the first generated token
        self.stopped: cancel.RequestStopped | None = None

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **_: object) -> torch.Tensor:
        try:
            cancel.check()
        except cancel.RequestStopped as err:
            if err.reason == "gone" or input_ids.shape[1] <= self.start:
                raise
            self.stopped = err
            return torch.ones(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)  # (B,) stop here
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)  # (B,) go on


def _generate(loaded: LoadedModel, enc: dict[str, torch.Tensor], start: int, **kwargs: object,
              ) -> tuple[torch.Tensor, Notice | None]:
    """Greedy/beam generation without gradients -> (1, T_out) token ids, and a notice when the request's time ended
    it early (``start``: the output's length before the first generated token)."""
    from transformers import StoppingCriteria, StoppingCriteriaList

    # generate() is GenerationMixin's (not PreTrainedModel's), typed with a union return and a self protocol
    # that reject this plain call (**enc, ids back): duck-typed here, as transformers' own pipelines call it.
    model: Any = loaded.model
    anytime = _Anytime(start)

    class Checked(StoppingCriteria):
        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kw: object) -> torch.Tensor:
            return anytime(input_ids, scores, **kw)

    with torch.inference_mode():
        out = model.generate(**enc, do_sample=False, stopping_criteria=StoppingCriteriaList([Checked()]), **kwargs)
    if anytime.stopped is None:
        return out, None
    return out, Notice("stopped", f"{anytime.stopped} The output is what was generated before the stop: its last "
                                  "span may be cut short or missing.")


@dataclass(frozen=True)
class Filled:
    """What one kind of infiller returns for the blanks of a prompt (``INFILLERS``)."""

    model_input: str  # the prompt with the model's own markers
    raw_output: str  # decoded generation, special markers kept
    spans: tuple[str, ...]  # text generated for each blank (empty when not aligned)
    segments: tuple[Segment, ...]  # prompt pieces and spans interleaved, for highlighting
    aligned: bool
    notices: tuple[Notice, ...]


def _budget(per_blank: int, n_blanks: int) -> int:
    """Tokens a seq2seq model may generate for all blanks: each span plus its sentinel."""
    return per_blank * n_blanks + n_blanks + 1


def _infill_t5(loaded: LoadedModel, pieces: tuple[str, ...], max_new_tokens: int) -> Filled:
    """T5: blanks become <extra_id_i>; the output lists the spans after their sentinels."""
    tok, n = loaded.tokenizer, len(pieces) - 1
    text = "".join(p + (f"<extra_id_{i}>" if i < n else "") for i, p in enumerate(pieces))
    extra: dict[str, object] = {}
    notices: list[Notice] = []
    if getattr(loaded, "untrained", False):  # a random T5 repeats <pad> forever: forbid it so output shows
        extra["suppress_tokens"] = [tok.pad_token_id]
        notices.append(Notice("untrained", "Untrained weights: <pad> was suppressed so that the output is visible."))
    # The decoder starts from "<pad> <extra_id_0>": a trained T5 always begins its answer with the first
    # sentinel anyway, and forcing it lets even an untrained model show where span 1 goes.
    start = int(getattr(loaded.model.config, "decoder_start_token_id", None) or tok.pad_token_id or 0)
    prefix = torch.tensor([[start, tok.convert_tokens_to_ids("<extra_id_0>")]], device=input_device(loaded.model))
    out, stopped = _generate(loaded, _encode_prompt(loaded, text), prefix.shape[1], decoder_input_ids=prefix,
                             max_new_tokens=_budget(max_new_tokens, n), num_beams=1, **extra)
    notices += [stopped] if stopped else []
    raw = tok.decode(out[0], skip_special_tokens=False)
    ends = tuple(t for t in (tok.eos_token, tok.pad_token, getattr(tok, "sep_token", None),
                             getattr(tok, "cls_token", None))
                 if isinstance(t, str) and t)
    spans, missing = parse_sentinels(raw, n, ends)
    return Filled(text, raw, tuple(spans), segments(pieces, spans), True,
                  tuple(notices + [Notice("missing", m) for m in missing]))


def _infill_bart(loaded: LoadedModel, pieces: tuple[str, ...], max_new_tokens: int) -> Filled:
    """BART: blanks become <mask>; the model writes the whole text, the spans are aligned back."""
    tok = loaded.tokenizer
    assert tok.mask_token is not None  # BART's tokenizer has <mask>
    text = tok.mask_token.join(pieces)
    enc = _encode_prompt(loaded, text)
    n_in = int(enc["input_ids"].shape[1])
    # BART's decoder starts from its decoder_start_token_id and <bos>: the first token it generates is the third
    out, stopped = _generate(loaded, enc, 2, max_new_tokens=n_in + _budget(max_new_tokens, len(pieces) - 1),
                             num_beams=4, early_stopping=True)
    cut = (stopped,) if stopped else ()
    raw = tok.decode(out[0], skip_special_tokens=False)
    plain = tok.decode(out[0], skip_special_tokens=True)
    found = align_spans(pieces, plain, ignore_case=bool(getattr(tok, "do_lower_case", False)))
    if found is None:
        return Filled(text, raw, (), (Segment(plain, None),), False, (Notice(
            "missing", "BART rewrote the text, so its spans could not be located: showing its whole output."), *cut))
    return Filled(text, raw, tuple(found), segments(pieces, found), True, cut)


def ranking_note(index: int, fill: CausalFill) -> Notice:
    shown = ", ".join(f"“{c.text.strip()}” {c.share:.0%}" for c in fill.blanks[index].by_whole)
    return Notice("info", f"Blank {index + 1}, by the likelihood of the whole text: {shown}.")


def _infill_causal(loaded: LoadedModel, pieces: tuple[str, ...], max_new_tokens: int) -> Filled:
    """A decoder: answers of 1..N tokens per blank from a short beam over continuations of the text
    before it, ranked by the log-probability of the whole text (:mod:`explorer.tasks.causal`)."""
    text = GENERIC_BLANK.join(pieces)
    fill = causal_fill(loaded, text, top_k=5, answer_tokens=max(1, min(max_new_tokens, CAUSAL_SPAN_TOKENS)))
    spans = [b.best.text.strip() for b in fill.blanks]
    how = Notice("info", "Decoder: it reads left to right, so each blank's answers are continuations of the "
                         "text before it, ranked again with the words after it (the whole text's likelihood).")
    notes = (how, *(ranking_note(i, fill) for i in range(len(spans))), *fill.notices)
    return Filled(text, fill.filled, tuple(spans), segments(pieces, spans), True, notes)


Infiller = Callable[["LoadedModel", tuple[str, ...], int], Filled]
# How each family fills blanks (one function per kind of model, keyed like ``family``); the int is
# the number of new tokens allowed per blank.
INFILLERS: dict[str, Infiller] = {"t5": _infill_t5, "bart": _infill_bart, "causal": _infill_causal}


def infill(loaded: LoadedModel, prompt: str, max_new_tokens: int = 24) -> InfillResult:
    """Fill every blank of ``prompt`` with a T5 or BART model (whichever ``loaded`` is).

    ``max_new_tokens`` is per blank (1..128).
    """
    fam = family(loaded)
    pieces = span_pieces(prompt, decoder=fam == "causal")
    start = time.perf_counter()
    out = INFILLERS[fam](loaded, pieces, max(1, min(int(max_new_tokens), 128)))  # per blank
    name = str(getattr(loaded, "name", None) or getattr(loaded, "key", "model"))
    return InfillResult(name, fam, prompt, out.model_input, out.raw_output, out.spans, out.segments, out.aligned,
                        bool(getattr(loaded, "untrained", False)), round(time.perf_counter() - start, 4),
                        out.notices, **ran_on(loaded))


def task(ref: resolve.ModelRef) -> str:
    """How the model is loaded for infilling: "causal-lm" for a decoder, else "seq2seq"
    (:meth:`explorer.runtime.resolve.ModelRef.task`)."""
    return ref.task("seq2seq")


def run(ref: resolve.ModelRef, prompt: str, max_new_tokens: int = 24, *, device: str | None = None,
        dtype: str | None = None) -> InfillResult:
    """Load the model ``ref`` (a catalog key or directory resolved once, untrained or not) as seq2seq, or as a
    causal LM for a decoder, and fill the blanks of ``prompt``. A bad prompt is refused before any model is
    loaded.
    """
    kind = task(ref)
    span_pieces(prompt, decoder=kind == "causal-lm")
    loaded = loading.load_model(ref, kind, device=device, dtype=dtype, purpose="Span infilling")
    return infill(loaded, prompt, max_new_tokens)
