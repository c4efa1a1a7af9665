"""One text split by one tokenizer: tokens, ids, character spans, word starts, truncation point.

Words are whitespace words, the same for every tokenizer, so that counts compare across
tokenizers ("fertility" = tokens per word). Nothing is truncated: ``truncated_at`` says where
the model would stop reading.

>>> t = tokenize("bert-base-uncased", "good gooooood")
>>> t.tokens
('[CLS]', 'good', 'goo', '##oo', '##ood', '[SEP]')
>>> t.word_pieces(), t.fertility
([['good'], ['goo', '##oo', '##ood']], 2.0)
>>> [r.count for r in compare("Hello world", ["gpt2", "t5"])]
[2, 3]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from explorer.core.errors import ExplorerError
from explorer.core.limits import TOKENIZATION_TEXT_CHARS
from explorer.core.userinput import require_text
from explorer.tokenization.pieces import readable_piece
from explorer.tokenization.registry import ENCODE_LOCK, get_spec, load_tokenizer, resolve_names

__all__ = ["Tokenization", "assemble", "check_text", "compare", "tokenize"]

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Tokenization:
    """How one tokenizer splits one text. All per-token tuples have length ``count`` (T).

    ``offsets[i]`` is the character span of token i in the text ((0, 0) for added special
    tokens); ``word_index[i]`` is the whitespace-separated word the token belongs to (None for
    special tokens and pieces that are only whitespace); ``word_start[i]`` says it opens a word.
    """

    name: str
    tokens: tuple[str, ...]  # (T,) vocabulary strings, e.g. "##ern", "Ġworld", "▁Hello"
    pieces: tuple[str, ...]  # (T,) readable form (byte-level BPE decoded to text)
    ids: tuple[int, ...]  # (T,)
    offsets: tuple[tuple[int, int], ...]  # (T, 2)
    special: tuple[bool, ...]  # (T,) added by the tokenizer ([CLS], </s>, ...)
    word_index: tuple[int | None, ...]  # (T,)
    word_start: tuple[bool, ...]  # (T,)
    unknown: tuple[int, ...]  # positions whose id is the unknown token
    words: tuple[str, ...]  # (W,) whitespace-separated words of the text
    count: int  # T, special tokens included
    max_length: int
    truncated_at: int | None  # character where the model would cut the text, None if it fits

    @property
    def n_special(self) -> int:
        return sum(self.special)

    @property
    def fertility(self) -> float:
        """Tokens per word (special and whitespace-only tokens excluded); 0.0 without words."""
        in_words = sum(w is not None for w in self.word_index)
        return in_words / len(self.words) if self.words else 0.0

    def word_pieces(self) -> list[list[str]]:
        """(W,) the readable pieces of every word, in order."""
        out: list[list[str]] = [[] for _ in self.words]
        for piece, w in zip(self.pieces, self.word_index, strict=True):
            if w is not None:
                out[w].append(piece)
        return out

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["offsets"] = [list(o) for o in self.offsets]
        d.update(n_special=self.n_special, fertility=round(self.fertility, 4))
        for key in ("tokens", "pieces", "ids", "special", "word_index", "word_start", "unknown", "words"):
            d[key] = list(d[key])
        return d


def check_text(text: object) -> str:
    """The text itself if it can be tokenized meaningfully, else an ExplorerError saying why."""
    return require_text(text, what="text", empty_hint="type or paste a sentence (or pick an example).",
                        max_chars=TOKENIZATION_TEXT_CHARS, limit_note="far more than any model reads")


def _word_of_tokens(text: str, offsets: list[tuple[int, int]], special: list[bool]) -> tuple[
        tuple[str, ...], list[int | None]]:
    """Whitespace words of ``text`` (W,) and, per token (T,), the word it belongs to.

    Words are split on whitespace, the same for every tokenizer, so that counts compare
    (each tokenizer's own notion of "word" differs: T5 keeps "Hello," together, BERT does not).
    A token belongs to the word holding its first non-space character: GPT-2's "Ġworld" spans
    the space before "world".
    """
    spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    # Word index of every character (-1 for whitespace): one pass, then O(1) per token.
    word_of_char = [-1] * len(text)
    for w, (s, e) in enumerate(spans):
        word_of_char[s:e] = [w] * (e - s)
    owner: list[int | None] = []
    for (s, e), sp in zip(offsets, special, strict=True):
        pos = s
        while pos < e - 1 and word_of_char[pos] < 0:  # skip a leading space ("Ġworld")
            pos += 1
        w = word_of_char[pos] if (not sp and pos < len(text)) else -1
        owner.append(w if w >= 0 else None)
    return tuple(text[s:e] for s, e in spans), owner


def _truncation_char(offsets: list[tuple[int, int]], special: list[bool], limit: int) -> int | None:
    """Where the model's truncation (``truncation=True``) would cut the text, or None.

    The model keeps ``limit`` tokens *including* the special tokens it adds, so BERT keeps
    510 text tokens between [CLS] and [SEP]; the cut is at the first text token dropped.
    """
    if limit <= 0 or len(offsets) <= limit:  # 0: the limit is not known (a server that does not say)
        return None
    content = [i for i, sp in enumerate(special) if not sp]
    keep = limit - (len(special) - len(content))
    return offsets[content[keep]][0] if 0 <= keep < len(content) else None


def tokenize(name: str, text: str) -> Tokenization:
    """Split ``text`` with tokenizer ``name`` exactly as the model would see it (T tokens).

    Any string is accepted (empty text gives just the special tokens); nothing is truncated,
    ``truncated_at`` says where the model would stop. Use ``check_text`` first for user input.
    """
    spec, tok = get_spec(name), load_tokenizer(name)
    if not isinstance(text, str):
        raise ExplorerError(f"Text must be a string, not {type(text).__name__}.")
    with ENCODE_LOCK:
        enc = tok(text, return_offsets_mapping=True, return_special_tokens_mask=True, truncation=False)
    ids = [int(i) for i in enc["input_ids"]]
    offsets = [(int(s), int(e)) for s, e in enc["offset_mapping"]]
    special = [bool(m) for m in enc["special_tokens_mask"]]
    tokens: list[str] = list(tok.convert_ids_to_tokens(ids))
    unk = tok.unk_token_id  # read once: the attribute goes through a slow __getattr__
    return assemble(name, text, ids, tokens, offsets, special, spec.model_max_length, unk_id=unk,
                    pieces=[readable_piece(name, t, sp) for t, sp in zip(tokens, special, strict=True)])


def assemble(name: str, text: str, ids: list[int], tokens: list[str], offsets: list[tuple[int, int]],
             special: list[bool], max_length: int, *, pieces: list[str] | None = None,
             unk_id: int | None = None) -> Tokenization:
    """A :class:`Tokenization` from any tokenizer's output (a shipped one, or a served model's through its
    server): words, word starts, unknown pieces and the truncation point are derived here, the same for all.

    >>> t = assemble("mine", "Hi you", [1, 7, 9], ["<s>", "Hi", " you"], [(0, 0), (0, 2), (2, 6)],
    ...              [True, False, False], 512)
    >>> t.word_index, t.fertility
    ((None, 0, 1), 1.0)
    """
    words, owner = _word_of_tokens(text, offsets, special)
    starts = [w is not None and (i == 0 or owner[i - 1] != w) for i, w in enumerate(owner)]
    return Tokenization(
        name=name, tokens=tuple(tokens), pieces=tuple(tokens if pieces is None else pieces),
        ids=tuple(ids), offsets=tuple(offsets), special=tuple(special), word_index=tuple(owner),
        word_start=tuple(starts), unknown=tuple(i for i, x in enumerate(ids) if unk_id is not None and x == unk_id),
        words=words, count=len(ids), max_length=max_length,
        truncated_at=_truncation_char(offsets, special, max_length),
    )


def compare(text: str, names: Iterable[str] | None = None) -> list[Tokenization]:
    """The same text through several tokenizers (all five by default), in the order given."""
    check_text(text)
    return [tokenize(n, text) for n in resolve_names(names)]
