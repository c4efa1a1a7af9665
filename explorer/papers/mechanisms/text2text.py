"""Tasks as text: T5's task prefixes, CTRL's control codes and M2M-100's language tokens, tokenized.

- T5 (Raffel et al. 2020, Figure 1 and Appendix D): every task is ``"<prefix> <input>"`` in and the label
  *as text* out (``"not acceptable"``, ``"3.8"``), both through T5's own SentencePiece (shipped) and ended by
  ``</s>``. STS-B scores are rounded to the nearest 0.2 and written with one decimal (``t5.data.preprocessors.stsb``).
- CTRL (Keskar et al. 2019, §3-4): a control code is the first token of every sequence. The code ids are
  CTRL's own (``transformers``' ``CONTROL_CODES`` table); CTRL's fastBPE vocabulary is not shipped, so
  GPT-2's byte-level BPE stands in for the pieces of the text and their ids are GPT-2's.
- M2M-100 (Fan et al. 2021): the source is ``__src__ pieces </s>``; the decoder starts from ``</s>``
  (``decoder_start_token_id`` 2) with the target language token forced as the first generated token, so the
  labels are ``__tgt__ pieces </s>``. Language-token ids follow transformers' ``M2M100Tokenizer``
  (after the 128,004-entry vocabulary: vocab_size 128,112 - 100 languages - 8 made-up words). Its
  SentencePiece model is not shipped: T5's stands in for the pieces, whose M2M-100 ids are unknown (None).
"""

from __future__ import annotations

from dataclasses import dataclass

from transformers.models.ctrl.tokenization_ctrl import CONTROL_CODES
from transformers.models.m2m_100.tokenization_m2m_100 import FAIRSEQ_LANGUAGE_CODES

from explorer.architecture import catalog
from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import TEXT2TEXT_INPUT_CHARS
from explorer.core.userinput import require_text
from explorer.tokenization import load_tokenizer

__all__ = ["CTRL_EXAMPLES", "M2M_LANGUAGES", "T5_TASKS", "CtrlFraming", "Layout", "M2MFraming", "T5Framing",
           "T5Task", "ctrl_codes", "ctrl_frame", "m2m_frame", "m2m_language_id", "stsb_label", "t5_frame"]



@dataclass(frozen=True)
class T5Task:
    """One task in T5's framing, with the example of the paper's Figure 1."""

    name: str
    prefix: str
    example_input: str
    example_target: str


T5_TASKS: dict[str, T5Task] = {t.name: t for t in (
    T5Task("translation", "translate English to German:", "That is good.", "Das ist gut."),
    T5Task("cola", "cola sentence:", "The course is jumping well.", "not acceptable"),
    T5Task("stsb", "stsb", "sentence1: The rhino grazed on the grass. sentence2: A rhino is grazing in a field.",
           "3.8"),
    T5Task("summarize", "summarize:", "state authorities dispatched emergency crews tuesday to survey the damage "
           "after an onslaught of severe weather in mississippi.", "six people hospitalized after a storm in "
           "attala county."),
)}

# Control code -> example text after it. Wikipedia, Reviews, Books, Running and Questions ("Q: What is the capital
# of Australia? A:") are the prompts of the "Generations" section of salesforce/ctrl's README; Links, Horror and
# Translation follow the paper's examples (Keskar et al. 2019).
CTRL_EXAMPLES: dict[str, str] = {
    "Links": "https://www.cnn.com/2007/09/20/us-president-meets-british-pm",
    "Wikipedia": "Salesforce Inc. is",
    "Reviews": "Rating: 4.0",
    "Questions": "Q: What is the capital of Australia? A:",
    "Books": "Weary with toil, I haste me to my bed,",
    "Running": "Title:",
    "Horror": "A knife",
    "Translation": "English : We release a new model for coherent language generation ; French :",
}


def _languages() -> tuple[str, ...]:
    return tuple(FAIRSEQ_LANGUAGE_CODES["m2m100"])


M2M_LANGUAGES = _languages()
M2M_MADEUP_WORDS = 8  # M2M100Tokenizer's num_madeup_words: they sit after the language tokens


@dataclass(frozen=True)
class Layout:
    """A token sequence as the model reads it: pieces, ids (None where the real id is unknown) and roles."""

    tokens: tuple[str, ...]
    ids: tuple[int | None, ...]
    roles: tuple[str, ...]  # "prefix" | "code" | "language" | "text" | "special"

    def rows(self) -> list[dict[str, object]]:
        return [{"position": i, "token": t, "id": d, "role": r}
                for i, (t, d, r) in enumerate(zip(self.tokens, self.ids, self.roles, strict=True))]

    def to_dict(self) -> dict[str, object]:
        return {"tokens": list(self.tokens), "ids": list(self.ids), "roles": list(self.roles)}


def _text(text: object, what: str) -> str:
    return require_text(text, what=what, empty_hint=f"type the {what}.", max_chars=TEXT2TEXT_INPUT_CHARS,
                        limit_note="a task example is a sentence or a paragraph").strip()


def stsb_label(score: float) -> str:
    """An STS-B similarity as T5's target text: nearest multiple of 0.2, one decimal.

    >>> stsb_label(3.85), stsb_label(0.0), stsb_label(4.91)
    ('3.8', '0.0', '5.0')
    """
    if not 0.0 <= score <= 5.0:
        raise ExplorerError(f"An STS-B score is between 0 and 5 (got {score}): type a number such as 3.8.")
    return f"{round(score * 5) / 5:.1f}"


@dataclass(frozen=True)
class T5Framing:
    """One example in T5's framing: the text in (prefix + input) and the label as text, tokenized."""

    task: str
    source: str  # "<prefix> <input>"
    target: str  # the label as text
    encoder: Layout  # ends with </s>
    labels: Layout  # ends with </s>

    def to_dict(self) -> dict[str, object]:
        return {"task": self.task, "source": self.source, "target": self.target,
                "encoder": self.encoder.to_dict(), "labels": self.labels.to_dict()}


def _t5_target(task: str, target: str) -> str:
    if task != "stsb":
        return target
    try:
        return stsb_label(float(target))
    except ValueError as err:
        raise ExplorerError(f"STS-B's label is a similarity from 0 to 5 written as text: type a number "
                            f"such as 3.8, not {shorten(target, 20)!r}.") from err


def t5_frame(task: str, text: str, target: str) -> T5Framing:
    """``text`` under ``task``'s prefix and ``target`` as text, through the shipped T5 tokenizer."""
    if task not in T5_TASKS:
        raise ExplorerError(f"Unknown T5 task {shorten(task)!r}: choose one of {', '.join(T5_TASKS)}.")
    prefix = T5_TASKS[task].prefix
    source, target = f"{prefix} {_text(text, 'input text')}", _t5_target(task, _text(target, 'label text'))
    tok = load_tokenizer("t5")
    src_ids, tgt_ids = tok(source)["input_ids"], tok(text_target=target)["input_ids"]
    n_prefix = len(tok(prefix, add_special_tokens=False)["input_ids"])
    src_roles = ["prefix"] * n_prefix + ["text"] * (len(src_ids) - n_prefix - 1) + ["special"]
    tgt_roles = ["text"] * (len(tgt_ids) - 1) + ["special"]
    return T5Framing(task, source, target,
                     Layout(tuple(tok.convert_ids_to_tokens(src_ids)), tuple(src_ids), tuple(src_roles)),
                     Layout(tuple(tok.convert_ids_to_tokens(tgt_ids)), tuple(tgt_ids), tuple(tgt_roles)))


def ctrl_codes() -> tuple[str, ...]:
    """CTRL's control codes: the paper's examples first, then the rest alphabetically."""
    return (*CTRL_EXAMPLES, *sorted(c for c in CONTROL_CODES if c not in CTRL_EXAMPLES))


@dataclass(frozen=True)
class CtrlFraming:
    """A text with its control code prepended: the code is CTRL's own token, the pieces GPT-2's stand-ins."""

    code: str
    code_id: int  # in CTRL's vocabulary
    text: str
    layout: Layout  # ids of the pieces are GPT-2's (stand-in)
    stand_in: str = "gpt2"

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code, "code_id": self.code_id, "text": self.text, "layout": self.layout.to_dict(),
                "stand_in": self.stand_in}


def ctrl_frame(code: str, text: str) -> CtrlFraming:
    """``code`` as the first token (CTRL's id) followed by ``text`` in GPT-2's BPE (standing in for CTRL's)."""


    if code not in CONTROL_CODES:
        raise ExplorerError(f"{shorten(code, 40)!r} is not one of CTRL's {len(CONTROL_CODES)} control codes "
                            f"(such as {', '.join(CTRL_EXAMPLES)}).")
    text = _text(text, "text after the control code")
    tok = load_tokenizer("gpt2")
    ids = tok(" " + text)["input_ids"]  # a space: the text is a new word after the code
    return CtrlFraming(code, CONTROL_CODES[code], text, Layout(
        (code, *tok.convert_ids_to_tokens(ids)), (CONTROL_CODES[code], *ids), ("code", *["text"] * len(ids))))


def m2m_language_id(lang: str, vocab_size: int | None = None) -> int:
    """The id of ``__lang__`` in M2M-100: right after its SentencePiece vocabulary, in FAIRSEQ order.

    >>> m2m_language_id("en"), m2m_language_id("fr")
    (128022, 128028)
    """
    if lang not in M2M_LANGUAGES:
        raise ExplorerError(f"{shorten(lang, 20)!r} is not one of M2M-100's 100 languages (such as en, fr, de, zh).")
    size = vocab_size or int(catalog.variant_config("m2m100")["vocab_size"])  # 128,112
    return size - len(M2M_LANGUAGES) - M2M_MADEUP_WORDS + M2M_LANGUAGES.index(lang)


@dataclass(frozen=True)
class M2MFraming:
    """Encoder input, decoder input and labels of one translation pair in M2M-100's layout."""

    source_lang: str
    target_lang: str
    encoder: Layout  # __src__ pieces </s>
    decoder: Layout  # </s> __tgt__ pieces (shifted labels; the language token is the forced BOS)
    labels: Layout  # __tgt__ pieces </s>
    stand_in: str = "t5"

    def to_dict(self) -> dict[str, object]:
        return {"source_lang": self.source_lang, "target_lang": self.target_lang, "encoder": self.encoder.to_dict(),
                "decoder": self.decoder.to_dict(), "labels": self.labels.to_dict(), "stand_in": self.stand_in}


def _pieces(text: str) -> tuple[str, ...]:

    return tuple(load_tokenizer("t5").tokenize(text))  # stand-in for M2M-100's SentencePiece


def m2m_frame(source_lang: str, target_lang: str, source: str, target: str) -> M2MFraming:
    """The layout M2M-100's tokenizer and ``generate(forced_bos_token_id=...)`` produce for one pair."""
    config = catalog.variant_config("m2m100")
    eos, start = int(config["eos_token_id"]), int(config["decoder_start_token_id"])  # both </s> = 2
    src, tgt = m2m_language_id(source_lang), m2m_language_id(target_lang)
    s_pieces, t_pieces = _pieces(_text(source, "source sentence")), _pieces(_text(target, "target sentence"))
    src_tok, tgt_tok = f"__{source_lang}__", f"__{target_lang}__"
    none_s, none_t = (None,) * len(s_pieces), (None,) * len(t_pieces)
    return M2MFraming(
        source_lang, target_lang,
        Layout((src_tok, *s_pieces, "</s>"), (src, *none_s, eos), ("language", *["text"] * len(s_pieces), "special")),
        Layout(("</s>", tgt_tok, *t_pieces), (start, tgt, *none_t), ("special", "language", *["text"] * len(t_pieces))),
        Layout((tgt_tok, *t_pieces, "</s>"), (tgt, *none_t, eos), ("language", *["text"] * len(t_pieces), "special")))
