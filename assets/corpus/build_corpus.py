"""Rebuild ``python-docs.txt.xz``: the prose of the Python 3.11 documentation, one paragraph a line.

The lab's bundled corpus (see ``ATTRIBUTION.md``). Its source is the reStructuredText of the Python
documentation, which Debian ships in the ``python3.11-doc`` package (PSF licence)::

    apt-get install python3.11-doc
    python assets/corpus/build_corpus.py /usr/share/doc/python3.11/html/_sources

It also learns the lab's WordPiece vocabulary (``vocab.txt``) from that text.

What is kept is running English text: code blocks, doctests, tables, directives, titles and
reST markup are removed, and a paragraph must be mostly words. Each source file becomes one
document, opened by a line ``### <path>``; the library splits train and held-out by document.
The corpus is deterministic (sorted files, fixed xz preset): a rebuild gives the same bytes. The
vocabulary is not quite (the trainer breaks frequency ties in hash order), which is why it is shipped.
"""

from __future__ import annotations

import lzma
import re
import sys
from pathlib import Path

OUT = Path(__file__).with_name("python-docs.txt.xz")
# Parts of the docs that are C signatures, a retired package or snippets included elsewhere.
SKIP_DIRS = ("c-api", "distutils", "includes")
# Directives whose body is code or data, not prose: their whole indented body is dropped.
CODE_DIRECTIVES = {"code-block", "sourcecode", "code", "testcode", "testoutput", "testsetup", "testcleanup",
                   "doctest", "productionlist", "literalinclude", "highlight", "csv-table", "table",
                   "list-table", "toctree", "raw", "image", "figure", "only", "index", "include",
                   "autosummary", "moduleauthor", "sectionauthor", "audit-event", "availability", "grammar-snippet"}
_DIRECTIVE = re.compile(r"^\s*\.\.\s+([\w:-]+)::")
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+<>_.:])\1{2,}\s*$")
_ROLE = re.compile(r":[\w:+-]+:`(~?)([^`<]*?)(?:\s*<[^>]*>)?`")
_LINK = re.compile(r"`([^`<]+?)\s*<[^>]*>`__?")
_MARKS = [(re.compile(r"``([^`]+)``"), r"\1"), (re.compile(r"\*\*([^*]+)\*\*"), r"\1"),
          (re.compile(r"\*([^*\s][^*]*)\*"), r"\1"), (re.compile(r"`([^`]+)`_?_?"), r"\1"),
          (re.compile(r"\|[\w-]+\|"), ""), (re.compile(r"\[#?\w*\]_"), ""), (re.compile(r"\\ "), ""), (re.compile(r"\\(.)"), r"\1"),
          (re.compile(r"::$"), ":"), (re.compile(r"\s+"), " ")]
_BULLET = re.compile(r"^\s*(?:[-*+•]|#\.|\d+\.|\(\w\)|[a-z]\))\s+")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _role(m: re.Match[str]) -> str:
    text = m.group(2).strip()
    return text.rsplit(".", 1)[-1] if m.group(1) else text


def clean(text: str) -> str:
    """Inline reST markup -> plain words."""
    text = _ROLE.sub(_role, text)
    text = _LINK.sub(r"\1", text)
    for pattern, repl in _MARKS:
        text = pattern.sub(repl, text)
    return text.strip()


def is_prose(text: str) -> bool:
    """At least six words, most of them plain words, ending like a sentence."""
    tokens = text.split()
    wordy = sum(bool(re.fullmatch(r"[A-Za-z][a-z'’-]*[,.;:!?)]?", t)) for t in tokens)
    return len(tokens) >= 6 and wordy / len(tokens) >= 0.7 and text[-1] in ".!?:)"


def paragraphs(rst: str) -> list[str]:
    """The prose paragraphs of one reST file, markup removed."""
    out: list[str] = []
    skip_above: int | None = None  # inside a code block or code directive indented deeper than this
    blocks = re.split(r"\n\s*\n", rst)
    for block in blocks:
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        indent = _indent(lines[0])
        if skip_above is not None:
            if indent > skip_above:
                continue
            skip_above = None
        directive = _DIRECTIVE.match(lines[0])
        if directive:
            if directive.group(1) in CODE_DIRECTIVES:
                skip_above = indent
                continue
            # a prose directive (note, function, class...): drop its signature and option lines
            lines = [ln for ln in lines[1:] if not ln.strip().startswith(":")]
            if not lines:
                continue
        if lines[-1].rstrip().endswith("::"):
            skip_above = indent  # the next, deeper block is a literal block
        if any(ln.lstrip().startswith((">>>", "...", "+-", "|", "$ ", "% ", "..")) for ln in lines):
            continue
        if len(lines) >= 2 and _UNDERLINE.match(lines[-1]) or any(_UNDERLINE.match(ln) for ln in lines):
            continue
        text = clean(" ".join(_BULLET.sub("", ln).strip() for ln in lines))
        if is_prose(text):
            out.append(text)
    return out


def build(source: Path) -> tuple[str, int, int]:
    """The corpus text, its number of documents and of words."""
    parts: list[str] = []
    docs = n_words = 0
    for path in sorted(source.rglob("*.rst.txt")):
        rel = path.relative_to(source).as_posix()
        if rel.split("/")[0] in SKIP_DIRS:
            continue
        paras = paragraphs(path.read_text(encoding="utf-8", errors="replace"))
        if len(paras) < 2:
            continue
        parts.append(f"### {rel.removesuffix('.rst.txt')}\n" + "\n".join(paras) + "\n")
        docs += 1
        n_words += sum(len(p.split()) for p in paras)
    return "".join(parts), docs, n_words


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print(__doc__, file=sys.stderr)
        return 2
    text, docs, n_words = build(Path(argv[0]))
    OUT.write_bytes(lzma.compress(text.encode("utf-8"), preset=9 | lzma.PRESET_EXTREME))
    print(f"{docs} documents, {n_words:,} words, {OUT.stat().st_size:,} bytes -> {OUT.name}")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from explorer.training import vocab  # the vocabulary is learnt from the corpus just written

    pieces = vocab.learn(ln for ln in text.splitlines() if not ln.startswith("### "))
    vocab.VOCAB_FILE.write_text("\n".join(pieces) + "\n", encoding="utf-8")
    print(f"{len(pieces):,} WordPiece pieces -> {vocab.VOCAB_FILE.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
