"""C4's cleaning of Common Crawl (Raffel et al. 2020, T5, Sec. 2.2), applied to any text, with what each rule removed.

T5 was pretrained on C4, 750 GB of English web text kept from one month of Common Crawl by these heuristics, in
this order (the paper's list; its released TensorFlow Datasets code applies them the same way):

line rules (each line of a page):
  1. keep only lines that end in a terminal punctuation mark (``.``, ``!``, ``?`` or a closing quotation mark);
  2. drop lines with fewer than 3 words;
  3. drop lines that contain the word "Javascript" (the "please enable Javascript" warnings);
page rules (what is left of each page):
  4. drop pages with fewer than 5 sentences;
  5. drop pages that contain a word of the "List of Dirty, Naughty, Obscene or Otherwise Bad Words";
  6. drop pages that contain "lorem ipsum" (placeholder text);
  7. drop pages that contain a curly bracket ``{`` (code);
corpus rule:
  8. of every three-sentence span that occurs more than once, keep the first and drop the later ones.

The paper's last filter, langdetect's probability of English at least 0.99, is not applied here (no language
detector is installed offline): the report says so. A "page" is a blank-line-separated block of the text.

>>> r = clean("A short line\\nThis line ends well. It has two sentences.\\n\\nfunction f() { return 1; }.")
>>> [(x.rule, x.lines, x.pages) for x in r.removed if x.lines or x.pages]
[('terminal punctuation', 1, 0), ('fewer than 5 sentences', 0, 2)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.core.limits import C4_PASTE_CHARS
from explorer.core.userinput import require_text
from explorer.runtime import cancel
from explorer.training import corpus

__all__ = ["RULES", "Removed", "Report", "bad_words", "clean", "clean_bundled", "clean_pages",
           "sentences"]

MIN_WORDS, MIN_SENTENCES, SPAN = 3, 5, 3
RULES = ("terminal punctuation", "fewer than 3 words", "Javascript", "fewer than 5 sentences", "bad word",
         "lorem ipsum", "curly bracket", "repeated three-sentence span")
_TERMINAL = (".", "!", "?", '"', "\u201d", "'")
_SENTENCE = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"'\u201d)]))\s+(?=\S)")
_WORD = re.compile(r"[a-z0-9']+")
BAD_WORDS = Path(__file__).resolve().parents[2] / "assets" / "corpus" / "c4_badwords_en.txt"
MAX_EXAMPLES = 3


@lru_cache(maxsize=1)
def bad_words() -> tuple[frozenset[str], tuple[str, ...]]:
    """(single words, phrases) of the bundled list (lower case), as C4 matched them."""
    entries = [w.strip().lower() for w in BAD_WORDS.read_text(encoding="utf-8").splitlines() if w.strip()]
    return frozenset(w for w in entries if " " not in w), tuple(w for w in entries if " " in w)


def sentences(text: str) -> list[str]:
    """A text cut after ``.``, ``!`` or ``?`` (and a closing quote) followed by white space.

    >>> sentences('He said "stop." Then he left! Why?')
    ['He said "stop."', 'Then he left!', 'Why?']
    """
    return [s for s in _SENTENCE.split(text.strip()) if s]


@dataclass
class Removed:
    """What one rule removed: lines, whole pages, and the characters they held."""

    rule: str
    lines: int = 0
    pages: int = 0
    characters: int = 0
    examples: list[str] = field(default_factory=list)  # a few removed lines or page openings (bad words: none)

    def add(self, text: str, *, page: bool = False, show: bool = True, example: str | None = None) -> None:
        """Count ``text`` as removed (its characters once: a page whose lines a line rule took already counts only
        what was left of it); ``example`` is shown in its place (such a page's opening)."""
        self.pages += page
        self.lines += not page
        self.characters += len(text)
        example = text if example is None else example
        if show and len(self.examples) < MAX_EXAMPLES:
            self.examples.append(example[:120] + ("…" if len(example) > 120 else ""))


@dataclass(frozen=True)
class Report:
    """The cleaned text and, per rule in order, what it removed.

    Characters are counted the same way on both sides: those of the pages given (``characters_in``) and those of
    the pages kept (``characters_kept``), not the blank lines :attr:`kept` puts between pages to show them, so
    what is kept is never more than what was given.
    """

    kept: str
    pages_in: int
    pages_kept: int
    characters_in: int
    removed: tuple[Removed, ...]
    notes: tuple[str, ...]
    characters_kept: int = 0  # of the kept pages, the separators between them not counted


def _line_rule(line: str) -> str | None:
    if not line.rstrip().endswith(_TERMINAL):
        return RULES[0]
    if len(line.split()) < MIN_WORDS:
        return RULES[1]
    if "javascript" in line.lower():
        return RULES[2]
    return None


def _page_rule(page: str) -> str | None:
    if len(sentences(page)) < MIN_SENTENCES:
        return RULES[3]
    lower = page.lower()
    words, phrases = bad_words()
    if not words.isdisjoint(_WORD.findall(lower)) or any(p in lower for p in phrases):
        return RULES[4]
    if "lorem ipsum" in lower:
        return RULES[5]
    if "{" in page:
        return RULES[6]
    return None


def _dedupe(pages: list[str], removed: Removed) -> list[str]:
    """Drop every three-sentence span already seen (sentences of a span removed from the later page)."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for page in pages:
        sents = sentences(page)
        drop: set[int] = set()
        for i in range(len(sents) - SPAN + 1):
            span = tuple(s.strip() for s in sents[i:i + SPAN])
            if span in seen:
                drop.update(range(i, i + SPAN))
            else:
                seen.add(span)
        for i in sorted(drop):
            removed.add(sents[i])
        kept = " ".join(s for i, s in enumerate(sents) if i not in drop)
        if kept:
            out.append(kept)
    return out


def clean(text: str) -> Report:
    """A pasted ``text`` (blank-line-separated pages) through C4's rules, every rule's removals counted."""
    text = require_text(text, what="text", empty_hint="paste a web page's text (or use the bundled corpus).",
                        max_chars=C4_PASTE_CHARS, limit_note="far more than a page")
    pages = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    if not pages:
        raise ExplorerError("The text has no pages: paste some text.")
    return clean_pages(pages)


def clean_bundled() -> Report:
    """The pretraining lab's bundled corpus (the Python documentation: one page per document, one line per
    paragraph) through C4's rules."""
    text = corpus.bundled()
    return clean_pages(["\n".join(doc) for doc in text.train + text.heldout])


def clean_pages(pages: list[str]) -> Report:
    """Pages (each a block of lines) through C4's line, page and corpus rules, in the paper's order."""
    removed = {rule: Removed(rule) for rule in RULES}
    survivors = []
    for page in pages:
        cancel.check()
        lines = []
        for line in page.splitlines():
            if not line.strip():
                continue
            rule = _line_rule(line)
            if rule is None:
                lines.append(line.strip())
            else:
                removed[rule].add(line.strip())
        kept = "\n".join(lines)
        rule = _page_rule(kept)
        if rule is None:
            survivors.append(kept)
        else:
            removed[rule].add(kept, page=True, show=rule != RULES[4], example=kept or page.strip())
    final = _dedupe(survivors, removed[RULES[7]])
    notes = ("C4 also kept only pages langdetect judged English with probability 0.99 or more; no language "
             "detector is installed here, so that filter is not applied.",)
    return Report("\n\n".join(final), len(pages), len(final), sum(len(p) for p in pages), tuple(removed.values()),
                  notes, sum(len(p) for p in final))
