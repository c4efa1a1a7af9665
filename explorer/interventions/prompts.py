"""A prompt as one model reads it for an intervention: its ids, the tokens of the patched stack, and where the
answer is read.

Prompts are typed with a blank where the answer goes (``___``, ``[MASK]`` or ``<mask>``: the grammar of every page,
:func:`explorer.core.userinput.split_blanks`), and each family reads the same typed text its own way:

- a **decoder** reads the text before the blank (no blank: the whole text); the answer is its next token;
- a **masked LM** reads the blank as its mask token; the answer is read at that position;
- an **encoder-decoder** reads the blank as T5's first sentinel (``<extra_id_0>``) or BART's ``<mask>``; its decoder
  reads its start token and the sentinel (T5), or its start token and the text up to the blank (BART, teacher
  forced); the answer is the decoder's next token.

An answer word (a target, a foil) is put in the blank and tokenized with the text: the token at the blank is the
one scored, so " Paris" after "of" is Gemma's ``▁Paris``, BERT's ``paris`` and RoBERTa's ``ĠParis`` alike.

>>> blank_parts("The city of ___.", "decoder")
('The city of', ' ', '.')
>>> blank_parts("The city of", "decoder")
('The city of', ' ', '')
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.errors import ExplorerError, shorten
from explorer.core.handles import Tokenizer
from explorer.core.limits import INTERVENTION_ANSWER_CHARS, INTERVENTION_PROMPT_CHARS
from explorer.core.notices import Notice
from explorer.core.userinput import SPAN_MARKER, require_text, split_blanks

__all__ = ["MAX_TOKENS", "SENTINEL", "Prompt", "answer_id", "blank_parts", "check_prompt", "phrase_notice", "read",
           "start_id"]

MAX_TOKENS = 64  # positions of a patching grid: every one is a patched copy of the forward per layer
SENTINEL = "<extra_id_0>"  # T5's first span sentinel


@dataclass(frozen=True)
class Prompt:
    """One prompt as a model reads it."""

    text: str  # as typed
    ids: tuple[int, ...]  # the model's input ids (the encoder's, for an encoder-decoder)
    decoder_ids: tuple[int, ...] | None  # an encoder-decoder's decoder input; None otherwise
    readout: int  # position, in the output's sequence, of the logits the answer is read from
    blank: int  # position of the blank in ``ids`` (a decoder's: one past its last token)
    before: str  # the text before the blank and what separates it from the blank, after it: how an answer fills it
    gap: str
    after: str


def check_prompt(text: object, what: str) -> str:
    """``text`` when it is a usable prompt, else an ExplorerError naming ``what`` ("clean prompt", ...)."""
    return require_text(text, what=what, empty_hint="type a sentence with a blank (___) where the answer goes.",
                        max_chars=INTERVENTION_PROMPT_CHARS, limit_note="a sentence or two is what patching needs")


def blank_parts(text: str, family: str) -> tuple[str, str, str]:
    """(text before the blank without its trailing space, that space, text after the blank). A decoder's prompt
    may have no blank (the answer follows the text after a space); other families need exactly one."""
    blank = SPAN_MARKER.search(text) is not None
    pieces = split_blanks(text, max_blanks=1, max_chars=INTERVENTION_PROMPT_CHARS, marker=SPAN_MARKER) if blank else ()
    if not blank and family != "decoder":
        raise ExplorerError(f"This {family} reads its answer in a blank: put ___ where the answer goes, e.g. "
                            "'The Eiffel Tower is in the city of ___.'")
    before, after = pieces if blank else (text, "")
    stripped = before.rstrip()
    return stripped, before[len(stripped):] or ("" if blank else " "), after


def _ids(tokenizer: Tokenizer, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=True)["input_ids"])


def _mask_token(tokenizer: Tokenizer, family: str) -> str:
    vocab = tokenizer.get_vocab()
    if family == "encoder-decoder" and SENTINEL in vocab:
        return SENTINEL
    mask = getattr(tokenizer, "mask_token", None)
    if not mask:
        raise ExplorerError(f"This {family}'s tokenizer has no mask token, so it cannot read a blank: pick a masked "
                            "LM, a T5 or BART model, or a decoder.")
    return str(mask)


def start_id(config: object) -> int:
    start = getattr(config, "decoder_start_token_id", None)
    if start is None:
        start = getattr(config, "pad_token_id", None)
    return int(start or 0)


def read(tokenizer: Tokenizer, config: object, text: str, family: str, decoder_from: str | None = None) -> Prompt:
    """``text`` as a model of ``family`` reads it; an encoder-decoder's decoder reads ``decoder_from`` (the clean
    prompt, so both runs' decoders read the same text) when given, else ``text``."""
    before, gap, after = blank_parts(text, family)
    if family == "decoder":
        ids = _ids(tokenizer, before)
        return Prompt(text, tuple(ids), None, len(ids) - 1, len(ids), before, gap, after)
    mask = _mask_token(tokenizer, family)
    ids = _ids(tokenizer, f"{before}{gap}{mask}{after}")
    mask_id = tokenizer.convert_tokens_to_ids(mask)
    if mask_id not in ids:
        raise ExplorerError(f"The tokenizer did not keep the blank of {shorten(text)!r} as one {mask} token: "
                            "retype the blank as ___.")
    at = ids.index(mask_id)
    if family == "encoder":
        return Prompt(text, tuple(ids), None, at, at, before, gap, after)
    if mask == SENTINEL:
        decoder: tuple[int, ...] = (start_id(config), mask_id)
    else:  # BART: the decoder rebuilds the text, teacher-forced up to the blank
        source = ids if decoder_from is None else list(read(tokenizer, config, decoder_from, family).ids)
        decoder = (start_id(config), *source[:source.index(mask_id)])
    return Prompt(text, tuple(ids), decoder, len(decoder) - 1, at, before, gap, after)


def answer_id(tokenizer: Tokenizer, prompt: Prompt, word: object, what: str) -> int:
    """The id of the token an answer ``word`` puts in ``prompt``'s blank (its first token when it has several)."""
    word = require_text(word, what=what, empty_hint="type the word expected in the blank, e.g. Paris.",
                        max_chars=INTERVENTION_ANSWER_CHARS, limit_note="a word: only its first token is scored")
    word = word.strip()
    at = prompt.blank
    filled = _ids(tokenizer, f"{prompt.before}{prompt.gap}{word}{prompt.after}")
    sentinel = prompt.decoder_ids is not None and prompt.decoder_ids[-1] == tokenizer.convert_tokens_to_ids(SENTINEL)
    if not sentinel and len(filled) > at and filled[:at] == list(prompt.ids[:at]):
        return int(filled[at])
    # T5 spells the span after its sentinel; a word merged with the text before it is tokenized on its own
    pieces = list(tokenizer(word if sentinel else f"{prompt.gap}{word}", add_special_tokens=False)["input_ids"])
    if not pieces:
        raise ExplorerError(f"The {what} {shorten(word)!r} gives no token for this tokenizer: type a word.")
    return int(pieces[0])


def phrase_notice(tokenizer: Tokenizer, prompt: Prompt, word: object, what: str) -> Notice | None:
    """What an answer of several tokens is scored as (its first token, :func:`answer_id`), said; None for one token."""
    if word is None or not str(word).strip():
        return None
    typed = str(word).strip()
    sentinel = prompt.decoder_ids is not None and prompt.decoder_ids[-1] == tokenizer.convert_tokens_to_ids(SENTINEL)
    pieces = list(tokenizer(typed if sentinel else f"{prompt.gap}{typed}", add_special_tokens=False)["input_ids"])
    if len(pieces) < 2:
        return None
    shown = [tokenizer.decode([int(i)]) for i in pieces]
    return Notice("info", f"The {what} {shorten(typed)!r} is {len(pieces)} tokens here "
                          f"({', '.join(repr(t) for t in shown[:8])}): only its first token, {shown[0]!r}, is "
                          "scored (an intervention reads one position).")
