"""The text checked and the target (or foil) as the model's token ids, each choice said in words.

A target is what the user asks about: a word (`` Paris``), a phrase, or a token as the vocabulary spells it
(``▁Paris``, ``ĠParis``, ``##ing``). A word that follows the text with no space between is given one (the
model would never read ``isParis``), and a target of several tokens is scored as the sum of their
log-probabilities: both said in the result's notices. Refused before any work, each in one sentence: an empty or
over-long target, one that is a special token or holds one, one the vocabulary cannot spell (``[UNK]``), a text
holding special tokens typed as text.

>>> spaced("The capital of France is", "Paris"), spaced("The capital of France is ", "Paris")
(' Paris', ' Paris')
>>> spaced("Thank you", "!"), spaced("", "Paris")
('!', 'Paris')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from explorer.core.errors import ExplorerError, shorten
from explorer.core.handles import Tokenizer
from explorer.core.limits import EXPLAIN_TARGET_CHARS, EXPLAIN_TEXT_CHARS
from explorer.core.notices import Notice
from explorer.core.userinput import SPAN_MARKER, require_text

__all__ = ["FOIL_IS_TARGET", "MAX_TARGET_TOKENS", "NOTHING_TO_ATTRIBUTE", "Target", "check_question", "check_text",
           "check_typed", "check_typed_target", "own", "resolve", "spaced"]

MAX_TARGET_TOKENS = 8  # a phrase, not a sentence: each token is one more scored position
_VOCAB_MARKS = ("▁", "Ġ", "##")  # a target spelled as a vocabulary token (SentencePiece, byte-level BPE, WordPiece)
FOIL_IS_TARGET = "The foil is the target itself: pick another word to contrast with."
NOTHING_TO_ATTRIBUTE = ("The text leaves no token to attribute ({why}): type a few words around the blank, or before "
                        "the word to explain.")


@dataclass(frozen=True)
class Target:
    """A target or foil as scored: its token ids and how each reads."""

    typed: str  # as typed ("" when it is the model's own prediction)
    scored: str  # as scored: a space before a word that follows the text
    ids: tuple[int, ...]
    pieces: tuple[str, ...]  # each token decoded
    own: bool = False  # the model's own top prediction (nothing typed)

    @property
    def shown(self) -> str:
        return self.scored if self.scored.strip() else repr(self.scored)

    def notices(self, role: str = "target") -> tuple[Notice, ...]:
        out = []
        if self.own:
            out.append(Notice("info", f"No {role} given: the model's own top prediction {self.shown!r} is explained."))
        if self.typed and self.scored != self.typed and not self.typed.startswith(_VOCAB_MARKS):
            out.append(Notice("info", f"The {role} is scored as {self.scored!r}: a word that follows the text "
                                      "starts with a space for the model."))
        if len(self.ids) > 1:
            out.append(Notice("info", f"The {role} {self.shown!r} is {len(self.ids)} tokens "
                                      f"({', '.join(repr(p) for p in self.pieces)}): its score is the sum of their "
                                      "log-probabilities, each given the ones before it."))
        return tuple(out)


def check_typed(text: object, what: str = "text") -> str:
    """``text`` when it is a non-blank string within the cap (what a page checks once, before any model)."""
    return require_text(text, what=what, empty_hint="type a sentence for the model to read.",
                        max_chars=EXPLAIN_TEXT_CHARS,
                        limit_note="every token is one more pass of the attribution methods")


def check_question(text: object, target: object = None, foil: object = None) -> tuple[str, str | None, str | None]:
    """The text, target and foil as every path checks them before any model loads or any request is sent (a model
    here or a served one: the same rules, the same words): the text typed and within its cap, with words besides
    its blank; the target and the foil each a word or a short phrase on one line (empty: the model's own
    prediction, no foil); a foil other than the target.

    >>> check_question("The capital of France is", "Paris", "Rome")
    ('The capital of France is', 'Paris', 'Rome')
    >>> check_question("___", "Paris")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    explorer.core.errors.ExplorerError: The text leaves no token to attribute (it holds only its blank): ...
    """
    typed = check_typed(text)
    aim, against = check_typed_target(target), check_typed_target(foil, "foil")
    if aim is not None and against is not None and aim.strip() == against.strip():
        raise ExplorerError(FOIL_IS_TARGET)
    if not SPAN_MARKER.sub(" ", typed).strip():
        raise ExplorerError(NOTHING_TO_ATTRIBUTE.format(why="it holds only its blank"))
    return typed, aim, against


def check_text(text: object, tokenizer: Tokenizer, blanks: re.Pattern[str] | None = None,
               what: str = "text") -> str:
    """``text`` when it can be explained: a non-blank string within the cap, holding no special token typed as
    text (the blanks matched by ``blanks`` excepted: they are the question)."""
    text = check_typed(text, what)
    rest = blanks.sub(" ", text) if blanks is not None else text
    found = next((s for s in _specials(tokenizer) if s in rest), None)
    if found is not None:
        raise ExplorerError(f"The {what} holds {found!r}, one of the model's special tokens typed as text: remove "
                            "it (the model adds its own special tokens where they belong).")
    return text


def _specials(tokenizer: Tokenizer) -> list[str]:
    # longest first: "<extra_id_10>" before "<extra_id_1>"; two-character ones ("<s>") are spelled rarely by hand
    return sorted((s for s in set(tokenizer.all_special_tokens) if len(s) >= 3), key=len, reverse=True)


def spaced(before: str, typed: str) -> str:
    """``typed`` as it follows ``before``: the space between them belongs to the target (tokenizers glue a word's
    leading space to it), and a word right after a word gets one."""
    if not before or typed[:1].isspace():
        return typed
    if before[-1:].isspace():
        return before[len(before.rstrip()):] + typed
    return " " + typed if before[-1].isalnum() and typed[:1].isalnum() else typed


def check_typed_target(typed: object, role: str = "target") -> str | None:
    """A typed target's own checks, before any model loads (empty means: the model's own prediction)."""
    return None if typed is None or (isinstance(typed, str) and not typed.strip()) else _checked(typed, role)


def _checked(typed: object, role: str) -> str:
    if not isinstance(typed, str):
        raise ExplorerError(f"The {role} must be text, not {type(typed).__name__}.")
    if not typed.strip():
        raise ExplorerError(f"The {role} is empty: type the word whose prediction you want explained.")
    if len(typed) > EXPLAIN_TARGET_CHARS:
        raise ExplorerError(f"The {role} has {len(typed):,} characters; at most {EXPLAIN_TARGET_CHARS} (a word or a "
                            "short phrase).")
    if any(ord(c) < 32 and c not in "\t" for c in typed):
        raise ExplorerError(f"The {role} holds a control character (a line break?): type one word or phrase.")
    return typed


def _vocabulary_token(tokenizer: Tokenizer, typed: str) -> int | None:
    """The id of a target typed as the vocabulary spells a token (``▁Paris``), else None."""
    if not typed.startswith(_VOCAB_MARKS) or " " in typed:
        return None
    return tokenizer.get_vocab().get(typed)


def resolve(tokenizer: Tokenizer, typed: object, before: str, role: str = "target") -> Target:
    """``typed`` as the token ids scored after ``before`` (the text in front of it), or one ExplorerError."""
    word = _checked(typed, role)
    special = set(tokenizer.all_special_ids)
    if word.strip() in set(tokenizer.all_special_tokens) or any(t in word for t in _specials(tokenizer)):
        raise ExplorerError(f"The {role} {shorten(word.strip())!r} is or holds a special token: explain a word "
                            "instead.")
    if (exact := _vocabulary_token(tokenizer, word)) is not None:
        ids, scored = [exact], word
    else:
        scored = spaced(before, word)
        ids = [int(i) for i in tokenizer(scored, add_special_tokens=False)["input_ids"]]
    if not ids:
        raise ExplorerError(f"The {role} {shorten(word)!r} gives no token: type a word.")
    if tokenizer.unk_token_id is not None and tokenizer.unk_token_id in ids:
        raise ExplorerError(f"The {role} {shorten(word)!r} is not in this model's vocabulary (it reads as "
                            f"{tokenizer.unk_token}): pick a word the model can spell.")
    if any(i in special for i in ids):
        raise ExplorerError(f"The {role} {shorten(word)!r} holds a special token: explain a word instead.")
    if len(ids) > MAX_TARGET_TOKENS:
        raise ExplorerError(f"The {role} is {len(ids)} tokens; at most {MAX_TARGET_TOKENS} (a word or a short "
                            "phrase): shorten it.")
    return Target(word, scored, tuple(ids), tuple(tokenizer.decode([i]) for i in ids))


def own(tokenizer: Tokenizer, token: int) -> Target:
    """The model's own prediction as a target (one token)."""
    piece = tokenizer.decode([token])
    return Target("", piece, (int(token),), (piece,), own=True)
