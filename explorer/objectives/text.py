"""From the user's text to the tokens (and vocabulary) a strategy works on.

Each strategy names the tokenizer its original model used (``Strategy.tokenizer``) and how a
sequence is framed with special tokens (``Strategy.frame``). The text itself can never produce
a special token: typing "[SEP]" or "<mask>" gives ordinary pieces, so masks stay off the frame.
Sequences are cut to ``MAX_TOKENS`` (the 512 positions of BERT/T5), and the result says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from explorer.core.limits import OBJECTIVES_TEXT_CHARS
from explorer.core.userinput import require_text
from explorer.objectives.base import Vocab, is_special
from explorer.objectives.sentence import DISTRACTORS

__all__ = ["EXAMPLE_TEXT", "EXAMPLE_TRANSLATION", "FRAMES", "MAX_TOKENS", "Prepared",
    "check_text", "pieces", "prepare", "vocab_for"]

MAX_TOKENS = 512
_PLACEHOLDER = re.compile(r"\[unused\d+\]")
# The page's default text: realistic, three sentences, rare words and punctuation.
EXAMPLE_TEXT = (
    "The committee approved the new railway line after a long debate. Construction will start "
    "next spring and should take about four years! Critics argue that the unbelievably high costs "
    "could have funded hundreds of smaller projects instead."
)
EXAMPLE_TRANSLATION = (
    "Le comité a approuvé la nouvelle ligne de chemin de fer après un long débat."
)
# frame -> (tokenizer-independent specials): cls, sep, mask, word scheme
FRAMES: dict[str, tuple[str, str, str, str]] = {
    "bert": ("[CLS]", "[SEP]", "[MASK]", "wordpiece"),
    "roberta": ("<s>", "</s>", "<mask>", "bpe"),
    "gpt2": ("<|endoftext|>", "<|endoftext|>", "<mask>", "bpe"),
    "t5": ("", "</s>", "<extra_id_0>", "sentencepiece"),
    "albert": ("[CLS]", "[SEP]", "[MASK]", "sentencepiece"),
}


@dataclass(frozen=True)
class Prepared:
    """Tokens ready for a strategy: ``tokens`` (T <= 512) framed with special tokens.

    The vocabulary is looked up (cached per process) rather than stored, so that a cached
    Prepared stays small: a 50k-token vocabulary would be copied on every cache hit.
    """

    tokens: tuple[str, ...]
    tokenizer: str
    frame: str
    n_text_tokens: int  # pieces of the text(s) before truncation, specials excluded
    truncated: bool

    @property
    def vocab(self) -> Vocab:
        return vocab_for(self.tokenizer, self.frame)

    def to_dict(self) -> dict:
        return {"tokens": list(self.tokens), "tokenizer": self.tokenizer, "frame": self.frame,
                "n_text_tokens": self.n_text_tokens, "truncated": self.truncated}


def _tokenizer(name: str):
    from explorer.tokenization import load_tokenizer  # imports transformers: only when needed

    return load_tokenizer(name)


def check_text(text: object, what: str = "text") -> str:
    """The text if it can be used, else an ExplorerError saying what to do."""
    return require_text(text, what=what, empty_hint="type or paste a few sentences.", max_chars=OBJECTIVES_TEXT_CHARS,
                        limit_note=f"only {MAX_TOKENS} tokens are used anyway")


def pieces(text: str, tokenizer: str) -> list[str]:
    """The text's pieces without special tokens; a special-looking piece becomes the unknown token."""
    tok = _tokenizer(tokenizer)
    ids = tok(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
    unk = tok.unk_token if tok.unk_token and not is_special(tok.unk_token) else "<unk>"  # GPT-2's is <|endoftext|>
    # T5 keeps typed "<extra_id_0>" whole even when asked to split: it must not pose as a sentinel.
    return [unk if is_special(p) else p for p in tok.convert_ids_to_tokens(ids)]


@lru_cache(maxsize=8)
def vocab_for(tokenizer: str, frame: str) -> Vocab:
    """Replacement vocabulary (specials and placeholders excluded, sorted for reproducibility)
    and the frame's tokens."""
    tok = _tokenizer(tokenizer)
    specials = set(tok.all_special_tokens)
    # BERT's [unused0..993] placeholders never occur in text: a learner would read them as bugs.
    repl = tuple(sorted(t for t in tok.get_vocab()
                        if t not in specials and not is_special(t) and not _PLACEHOLDER.fullmatch(t)))
    cls, sep, mask, scheme = FRAMES[frame]
    corpus = tuple(tuple(pieces(s, tokenizer)) for s in DISTRACTORS)
    return Vocab(repl, mask=mask, scheme=scheme, cls=cls or sep, sep=sep, corpus=corpus)


def _wrap(frame: str, a: list[str], b: list[str] | None) -> list[str]:
    cls, sep, _, _ = FRAMES[frame]
    if frame == "gpt2":
        return a + (b or [])
    head = [cls] if cls else []
    if b is None:
        return head + a + [sep]
    return head + a + [sep] + ([sep] if frame == "roberta" else []) + b + [sep]


def prepare(text: str, tokenizer: str, frame: str, pair: str | None = None) -> Prepared:
    """Tokenize ``text`` (and ``pair``, a second sentence) and frame it, cutting to 512 tokens.

    With a pair the longer side is shortened first (like ``truncation="longest_first"``).

    >>> p = prepare("Unbelievable results!", "bert-base-uncased", "bert")
    >>> p.tokens, p.truncated
    (('[CLS]', 'unbelievable', 'results', '!', '[SEP]'), False)
    """
    a = pieces(check_text(text), tokenizer)
    b = pieces(check_text(pair, "second text"), tokenizer) if pair is not None else None
    n_text = len(a) + len(b or [])
    room = MAX_TOKENS - (len(_wrap(frame, [], [] if b is not None else None)))
    while len(a) + len(b or []) > room:
        if b is not None and len(b) > len(a):
            b.pop()
        else:
            a.pop()
    tokens = _wrap(frame, a, b)
    vocab_for(tokenizer, frame)  # fail early (missing tokenizer files) and warm the cache
    return Prepared(tuple(tokens), tokenizer, frame, n_text, len(a) + len(b or []) < n_text)
