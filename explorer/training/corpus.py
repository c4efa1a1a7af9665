"""The text the lab trains on: the bundled Python-documentation corpus, or a user's own file.

A corpus is a tuple of documents, each a tuple of paragraphs. Every 20th document is held out
(by position, so the split never changes between runs); a text with fewer than 20 documents
holds out its last 5% of words instead (cutting a paragraph where needed). A paragraph longer than
``MAX_PARAGRAPH_WORDS`` words is cut into pieces of that size first, so a text on one line (4.7 MB
without a line break once went entirely to the held-out part) is split by its words, not its lines.
Held-out text is never trained on: it measures loss, masked-token accuracy and the downstream probe.

>>> c = from_text("### a\\n" + "\\n".join(f"Sentence number {i} is here." for i in range(400)), "demo")
>>> c.words, len(c.train), len(c.heldout)
(2000, 32, 1)
"""

from __future__ import annotations

import lzma
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from explorer.core.errors import ExplorerError, shorten
from explorer.core.userfiles import MAX_UPLOAD_BYTES, MAX_UPLOAD_MB, decode_text, read_path

__all__ = ["BUNDLED", "HELDOUT_EVERY", "MAX_FILE_BYTES", "MIN_WORDS", "Corpus", "bundled", "from_bytes", "from_file",
           "from_text"]

BUNDLED = Path(__file__).resolve().parents[2] / "assets" / "corpus" / "python-docs.txt.xz"
BUNDLED_NAME = "Python 3.11 documentation (PSF licence)"
HELDOUT_EVERY = 20  # one document in 20 (5%) is held out
MAX_FILE_BYTES = MAX_UPLOAD_BYTES  # the one upload limit (~3M words: more than a CPU run reads); 1 GB is refused unread
MIN_WORDS = 2_000  # below this the held-out split is a few sentences and every metric is noise
MAX_PARAGRAPH_WORDS = 1_000  # longer ones are cut (the bundled corpus's longest paragraph has 353 words)
_PARAGRAPHS_PER_DOC = 12  # a plain file has no documents: cut it into chunks of this many paragraphs


@dataclass(frozen=True)
class Corpus:
    """Documents (tuples of paragraphs) split into train and held-out, with each document's name.

    Names come from ``### name`` lines (the bundled corpus: ``library/functools``, ``tutorial/classes``…);
    a plain text's chunks have none (""). A downstream task may label documents by name
    (:mod:`explorer.training.sections`).
    """

    name: str
    train: tuple[tuple[str, ...], ...]
    heldout: tuple[tuple[str, ...], ...]
    train_names: tuple[str, ...] = ()
    heldout_names: tuple[str, ...] = ()

    @property
    def words(self) -> int:
        return sum(len(p.split()) for doc in self.train + self.heldout for p in doc)

    @property
    def train_words(self) -> int:
        return sum(len(p.split()) for doc in self.train for p in doc)

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "words": self.words, "train_words": self.train_words,
                "train_documents": len(self.train), "heldout_documents": len(self.heldout)}


Doc = tuple[str, tuple[str, ...]]  # (name, paragraphs)


def _documents(text: str) -> list[Doc]:
    """``### name`` lines open documents; without them, blank-line paragraphs are grouped (no names)."""
    if re.search(r"^### ", text, re.MULTILINE):
        chunks = [chunk.splitlines() for chunk in re.split(r"^(?=### )", text, flags=re.MULTILINE)]
        docs = [(lines[0][4:].strip() if lines[0].startswith("### ") else "",
                 tuple(p for ln in lines[1:] if ln.strip()
                       for p in ([ln.strip()] if len(ln.split()) <= MAX_PARAGRAPH_WORDS else _pieces(ln))))
                for lines in chunks if lines]
        return [d for d in docs if d[1]]
    blocks = re.split(r"\n\s*\n", text) if "\n\n" in text.replace("\r", "") else text.splitlines()
    paras = [p for b in blocks if b.strip() for p in _pieces(b)]
    return [("", tuple(paras[i:i + _PARAGRAPHS_PER_DOC])) for i in range(0, len(paras), _PARAGRAPHS_PER_DOC)]


def _pieces(block: str) -> list[str]:
    """A paragraph as one line, or as pieces of ``MAX_PARAGRAPH_WORDS`` words when it is longer."""
    words = block.split()
    return [" ".join(words[i:i + MAX_PARAGRAPH_WORDS]) for i in range(0, len(words), MAX_PARAGRAPH_WORDS)]


def _held_out_words(paras: list[str]) -> tuple[list[str], list[str]]:
    """(train, held-out) paragraphs: the held-out part is the last 5% of the words, a paragraph cut where needed."""
    train, held = list(paras), list[str]()
    want = max(1, sum(len(p.split()) for p in paras) // HELDOUT_EVERY)
    while train and want > 0:
        words = train[-1].split()
        if len(words) <= want:
            held.insert(0, train.pop())
            want -= len(words)
        else:
            train[-1], cut = " ".join(words[:-want]), " ".join(words[-want:])
            held.insert(0, cut)
            want = 0
    return train, held


def _split(docs: list[Doc]) -> tuple[list[Doc], list[Doc]]:
    if len(docs) >= HELDOUT_EVERY:
        train = [d for i, d in enumerate(docs) if i % HELDOUT_EVERY != HELDOUT_EVERY // 2]
        seen = {p for _, paras in train for p in paras}
        # Documentation repeats boilerplate ("Availability: Unix."): a held-out copy of a trained paragraph leaks.
        heldout = [(name, tuple(p for p in paras if p not in seen)) for i, (name, paras) in enumerate(docs)
                   if i % HELDOUT_EVERY == HELDOUT_EVERY // 2]
        return train, [d for d in heldout if d[1]]
    kept, held = _held_out_words([p for _, d in docs for p in d])
    train = [("", tuple(kept[i:i + _PARAGRAPHS_PER_DOC])) for i in range(0, len(kept), _PARAGRAPHS_PER_DOC)]
    return train, [("", tuple(held))]


def from_text(text: str, name: str) -> Corpus:
    """A corpus from text; too little text says how much is needed."""
    docs = _documents(text)
    words = sum(len(p.split()) for _, d in docs for p in d)
    if words < MIN_WORDS:
        raise ExplorerError(f"{shorten(name)} has {words:,} words; the lab needs at least {MIN_WORDS:,} "
                            "(a few pages of text) to hold some out for evaluation. Give a longer text file.")
    train, heldout = _split(docs)
    if not heldout:
        raise ExplorerError(f"Every held-out paragraph of {shorten(name)} also appears in its training part, so "
                            "nothing is left to evaluate on. Give a text that does not repeat itself.")
    return Corpus(name, tuple(d for _, d in train), tuple(d for _, d in heldout), tuple(n for n, _ in train),
                  tuple(n for n, _ in heldout))


@lru_cache(maxsize=1)
def bundled() -> Corpus:
    """The Python documentation corpus every clone ships (about 950,000 words)."""
    if not BUNDLED.is_file():
        raise ExplorerError(f"The bundled corpus {BUNDLED.name} is missing from assets/corpus/. Restore it with "
                            "git (git checkout -- assets/corpus) or give your own text with --text-file.")
    return from_text(lzma.decompress(BUNDLED.read_bytes()).decode("utf-8"), BUNDLED_NAME)


def from_bytes(data: bytes, name: str) -> Corpus:
    """A user's file as bytes (a page upload): size cap, binary refused, UTF-8, at least ``MIN_WORDS`` words."""
    if len(data) > MAX_FILE_BYTES:
        raise ExplorerError(f"The text file is larger than {MAX_FILE_BYTES:,} bytes ({MAX_UPLOAD_MB} MB): use a "
                            "smaller file.")
    if b"\x00" in data[:65536]:
        raise ExplorerError("The text file looks binary (it contains NUL bytes). Give a plain UTF-8 text file.")
    return from_text(decode_text(data, "The text file"), name)


def from_file(path: str | Path) -> Corpus:
    """A user's UTF-8 text file: bounded read, binary refused, at least ``MIN_WORDS`` words."""
    return from_bytes(read_path(path, MAX_FILE_BYTES, "The text file"), Path(path).name)
