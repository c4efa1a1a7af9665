"""The text a walk reads, framed as the model's family reads it, and refused before any forward when it cannot be.

A decoder reads the text with the specials its tokenizer puts in front (Gemma's ``<bos>``) and predicts the next
token at the last one. A masked LM reads ``[CLS] text [SEP]``, a blank (``___``, ``[MASK]``) written as its own mask
token, and predicts at the first blank (else at the last token of the text, reconstructing it). An
encoder-decoder's encoder reads the text (a blank as T5's first sentinel) and its decoder its start token alone,
whose prediction is the first token of the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.architecture.anatomy import Card
from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.limits import FORWARD_TEXT_CHARS, FORWARD_TOKENS
from explorer.core.notices import Notice
from explorer.core.userinput import MARKER, require_text

__all__ = ["Framed", "check_text", "frame"]

SENTINEL = "<extra_id_0>"  # T5's first span sentinel: the blank an encoder-decoder fills


@dataclass(frozen=True)
class Framed:
    ids: tuple[int, ...]  # the encoder's, or the only stack's
    decoder_ids: tuple[int, ...]  # an encoder-decoder's decoder input; () otherwise
    read: int  # the position of the main stack whose prediction is read
    notices: tuple[Notice, ...] = ()


def check_text(text: object) -> str:
    """The typed text, or an ExplorerError when it is empty or over the cap."""
    return require_text(text, what="text", empty_hint="type a sentence to walk through the model.",
                        max_chars=FORWARD_TEXT_CHARS,
                        limit_note=f"the step-through reads at most {FORWARD_TOKENS} tokens")


def _ids(tokenizer: Tokenizer, text: str, specials: bool) -> list[int]:
    return [int(i) for i in tokenizer(text, add_special_tokens=specials)["input_ids"]]


def _decoder(tokenizer: Tokenizer, text: str) -> Framed:
    """The specials in front, none after the text (a BERT-style tokenizer's closing [SEP] would end it)."""
    ids, plain = _ids(tokenizer, text, True), _ids(tokenizer, text, False)
    for front in range(len(ids) - len(plain) + 1):
        if plain and ids[front:front + len(plain)] == plain:
            ids = ids[:front + len(plain)]
            break
    return Framed(tuple(ids), (), len(ids) - 1)


def _masked(tokenizer: Tokenizer, text: str) -> Framed:
    mask = tokenizer.mask_token
    ids = _ids(tokenizer, MARKER.sub(str(mask), text) if mask else text, True)
    if mask is not None and tokenizer.mask_token_id in ids:
        return Framed(tuple(ids), (), ids.index(int(tokenizer.mask_token_id)))
    specials = set(tokenizer.all_special_ids)
    last = max((n for n, i in enumerate(ids) if i not in specials), default=len(ids) - 1)
    return Framed(tuple(ids), (), last, (Notice("info", "The text has no blank (___ or [MASK]): the prediction "
                                                        "shown is at its last token, which the model sees."),))


def _seq2seq(tokenizer: Tokenizer, text: str, start: int) -> Framed:
    sentinel = tokenizer.convert_tokens_to_ids(SENTINEL)
    known = isinstance(sentinel, int) and sentinel != tokenizer.unk_token_id
    ids = _ids(tokenizer, MARKER.sub(SENTINEL, text) if known else text, True)
    return Framed(tuple(ids), (start,), 0, (Notice("info", "The decoder reads its start token alone: its "
                                                           "prediction is the answer's first token."),))


def _decoder_start(config: object) -> int:
    for name in ("decoder_start_token_id", "pad_token_id"):
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    decoder = getattr(config, "decoder", None)
    return _decoder_start(decoder) if decoder is not None else 0


def frame(tokenizer: Tokenizer, card: Card, config: object, text: str) -> Framed:
    """``text``'s ids as ``card``'s family reads them; an ExplorerError for special tokens only or too many."""
    if card.family == "decoder":
        framed = _decoder(tokenizer, text)
    elif card.family == "encoder":
        framed = _masked(tokenizer, text)
    else:
        framed = _seq2seq(tokenizer, text, _decoder_start(config))
    specials = set(tokenizer.all_special_ids) - {tokenizer.mask_token_id}
    if all(i in specials for i in framed.ids):
        raise ExplorerError("The text is special tokens only (such as <bos> or [SEP]): type words for the model "
                            "to read.")
    if len(framed.ids) > FORWARD_TOKENS:
        raise ExplorerError(f"The text is {len(framed.ids)} tokens (special tokens included); the step-through "
                            f"reads at most {FORWARD_TOKENS}: shorten it.")
    return framed
