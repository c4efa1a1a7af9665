"""Task files read and checked line by line before any model runs: one clear message naming the line.

A task file is JSONL, one example a line (:mod:`explorer.evaluation.task`); a perplexity text is plain UTF-8. The
bytes are checked first (size, UTF-16, binary), then every line (valid JSON, an object, the fields of its kind,
the answer in range, 2 to :data:`MAX_CHOICES` choices, text a model can read), so a mistake on line 4,000 is said
before the first example is scored. The byte and JSON checks are :mod:`explorer.core.userfiles`'s.

>>> task = parse_task(b'{"context": "2 + 2 =", "choices": ["4", "5"], "answer": 0, "level": "easy"}', "sums.jsonl")
>>> task.kind, task.examples[0].continuations(), task.fields
('choice', (' 4', ' 5'), ('level',))
>>> parse_task(b'{"context": "2 + 2 =", "choices": ["4", "5"], "answer": 2}', "sums.jsonl")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: Line 1 of sums.jsonl: the answer 2 is out of range: there are 2 choices, ...
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeGuard

from explorer.core import userfiles
from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import EVALUATION_EXAMPLE_CHARS, EVALUATION_TEXT_CHARS
from explorer.core.notices import Notice
from explorer.evaluation.task import CHOICE, CLOZE, DELIMITER, Example, Scalar, Task

__all__ = ["MAX_CHOICES", "MAX_EXAMPLES", "MAX_LINE_BYTES", "MAX_TEXTS", "check_bytes", "parse_lines", "parse_task",
           "parse_text", "read_lines", "read_task", "read_text"]

MAX_CHOICES = 64  # lm-eval's tasks have 2-10; each choice is one scored continuation (one request when served)
MAX_EXAMPLES = 5_000  # a few minutes of Gemma 3 270M on 2 cores per model; the page keeps what its budget allows
MAX_TEXTS = 5_000  # texts a projector draws: UMAP and t-SNE of 5,000 points take minutes on 2 cores
MAX_LINE_BYTES = 4 * EVALUATION_EXAMPLE_CHARS  # one JSON line: its texts, escapes and extra fields
_SHAPES = '{"context", "choices", "answer"} (multiple choice) or {"context", "continuation"} (cloze)'


def _utf16(data: bytes) -> bool:
    """A UTF-16 file: its byte-order mark, or (without one) a NUL in every other byte of its start."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    head = data[:400]
    if len(head) < 4:
        return False
    evens, odds = head[0::2], head[1::2]
    return max(evens.count(0) / len(evens), odds.count(0) / len(odds)) > 0.4


def check_bytes(data: bytes, what: str, limit: int = userfiles.MAX_UPLOAD_BYTES) -> str:
    """The file as text, or one ExplorerError: too large, UTF-16, binary (a NUL byte), not UTF-8."""
    if len(data) > limit:
        raise ExplorerError(f"{what} has {len(data):,} bytes; at most {limit:,} are read: use a smaller file.")
    if _utf16(data):
        raise ExplorerError(f"{what} is UTF-16 text: save it as UTF-8 (most editors offer it under Save As).")
    if b"\x00" in data:
        raise ExplorerError(f"{what} is binary (it holds NUL bytes), not a text file: give a JSONL or text file.")
    return userfiles.decode_text(data, what)


def _object(line: str, where: str) -> dict[str, object]:
    try:
        value = userfiles.loads_json(line, where, limit=MAX_LINE_BYTES)
    except ExplorerError as err:
        said = str(err).replace(" at line 1, column", " at column")
        if said.startswith("The JSON holds "):  # NaN, Infinity, a huge integer: the check names no line
            said = f"{where} holds {said.removeprefix('The JSON holds ')}"
        raise ExplorerError(f"{said} Each line holds one JSON object: {_SHAPES}.") from None
    if not isinstance(value, dict):
        raise ExplorerError(f"{where} is a JSON {type(value).__name__}, not an object: write {_SHAPES}.")
    return value


def _text(value: object, name: str, where: str, empty_ok: bool = False) -> str:
    if not isinstance(value, str):
        raise ExplorerError(f"{where}: \"{name}\" must be text, not {type(value).__name__} ({shorten(value, 40)}).")
    if not value.strip() and not empty_ok:
        raise ExplorerError(f"{where}: \"{name}\" is empty: give the words to score.")
    if "\x00" in value:
        raise ExplorerError(f"{where}: \"{name}\" holds a NUL character, which no tokenizer reads: remove it.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ExplorerError(f"{where}: \"{name}\" holds a lone surrogate (\\ud800-\\udfff), which is not text: "
                            "fix the escape.") from None
    return value


def _choices(obj: dict[str, object], where: str) -> tuple[tuple[str, ...], int]:
    raw = obj["choices"]
    if not isinstance(raw, list):
        raise ExplorerError(f"{where}: \"choices\" must be a list of texts, not {type(raw).__name__}.")
    if not 2 <= len(raw) <= MAX_CHOICES:
        raise ExplorerError(f"{where} has {len(raw):,} choices; give 2 to {MAX_CHOICES} (each is scored).")
    choices = tuple(_text(c, f"choices[{i}]", where) for i, c in enumerate(raw))
    if "answer" not in obj:
        raise ExplorerError(f"{where} has no \"answer\": give the index of the right choice (0 for the first).")
    answer = obj["answer"]
    if isinstance(answer, str) and answer in choices:
        return choices, choices.index(answer)
    if isinstance(answer, bool) or not isinstance(answer, int):
        raise ExplorerError(f"{where}: the answer {shorten(answer, 40)!r} is neither an index nor one of the "
                            "choices: give the index of the right choice (0 for the first).")
    if not 0 <= answer < len(choices):
        raise ExplorerError(f"{where}: the answer {answer} is out of range: there are {len(choices)} choices, so "
                            f"it must be 0 to {len(choices) - 1}.")
    return choices, answer


def _example(obj: dict[str, object], index: int, line: int, where: str) -> Example:
    kind = CHOICE if "choices" in obj else CLOZE if "continuation" in obj else None
    if kind is None or "context" not in obj:
        missing = [f for f in ("context", "choices" if kind != CLOZE else "continuation") if f not in obj]
        raise ExplorerError(f"{where} lacks {', '.join(map(repr, missing))}: write {_SHAPES}.")
    context = _text(obj["context"], "context", where, empty_ok=True)
    if kind == CHOICE:
        choices, answer = _choices(obj, where)
    else:
        choices, answer = (_text(obj["continuation"], "continuation", where),), 0
    if (size := len(context) + max(len(c) for c in choices)) > EVALUATION_EXAMPLE_CHARS:
        raise ExplorerError(f"{where} has {size:,} characters of context and choice; at most "
                            f"{EVALUATION_EXAMPLE_CHARS:,}: shorten it.")
    known = {"context", "choices", "answer", "continuation"}
    fields = tuple((k, v) for k, v in obj.items() if k not in known and _scalar(v))
    return Example(index, line, context, choices, answer, fields, kind)


def _scalar(value: object) -> TypeGuard[Scalar]:
    return isinstance(value, str | int | float | bool) and not (isinstance(value, str) and len(value) > 200)


def parse_task(data: bytes, name: str) -> Task:
    """Every example of a JSONL task file (``name``: how messages call it), or one ExplorerError naming the line."""
    shown = shorten(Path(name).name or "the task file", 60)
    text = check_bytes(data, shown)
    examples: list[Example] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"Line {number} of {shown}"
        ex = _example(_object(line, where), len(examples), number, where)
        if examples and ex.kind != examples[0].kind:
            raise ExplorerError(f"{where} is a {ex.kind} example but line {examples[0].line} is a "
                                f"{examples[0].kind} one: one task holds one kind (split the file).")
        examples.append(ex)
        if len(examples) > MAX_EXAMPLES:
            raise ExplorerError(f"{shown} holds more than {MAX_EXAMPLES:,} examples: split it into smaller files.")
    if not examples:
        raise ExplorerError(f"{shown} holds no examples: write one JSON object a line, {_SHAPES}.")
    return Task(Path(name).stem or "task", examples[0].kind, tuple(examples), shown, _notes(examples))


def _notes(examples: list[Example]) -> tuple[Notice, ...]:
    out = []
    short = [ex.line for ex in examples if ex.kind == CHOICE and len(set(ex.choices)) < len(ex.choices)]
    if short:
        out.append(Notice("info", f"{len(short)} example(s) repeat a choice (first on line {short[0]}): identical "
                                  "choices tie, and the first of them is taken."))
    spaced = [ex.line for ex in examples if ex.kind == CHOICE and any(c[:1].isspace() for c in ex.choices)]
    if spaced:
        out.append(Notice("info", f"{len(spaced)} example(s) have a choice that starts with a space (first on line "
                                  f"{spaced[0]}): each choice is scored after the context and lm-eval's delimiter "
                                  f"{DELIMITER!r} (its target_delimiter, added whatever the choice starts with), so "
                                  "those are scored with two spaces, as lm-eval scores them. Write the choices "
                                  "without their leading space (the delimiter gives one), or as a cloze task "
                                  "(its continuation is scored verbatim)."))
    return tuple(out)


def parse_text(data: bytes, name: str) -> str:
    """A perplexity text: UTF-8, not blank, at most :data:`EVALUATION_TEXT_CHARS` characters."""
    shown = shorten(Path(name).name or "the text", 60)
    text = check_bytes(data, shown)
    if not text.strip():
        raise ExplorerError(f"{shown} is empty: give a text whose perplexity to measure.")
    if len(text) > EVALUATION_TEXT_CHARS:
        raise ExplorerError(f"{shown} has {len(text):,} characters; perplexity is measured on at most "
                            f"{EVALUATION_TEXT_CHARS:,}: cut it.")
    return text


def read_task(path: str | Path) -> Task:
    """A task file named on the command line (a regular file, at most the upload limit read)."""
    name = Path(path).name
    return parse_task(userfiles.read_path(path, userfiles.MAX_UPLOAD_BYTES, f"The task file {shorten(name, 60)}"),
                      name)


def read_text(path: str | Path) -> str:
    """A perplexity text named on the command line."""
    name = Path(path).name
    return parse_text(userfiles.read_path(path, userfiles.MAX_UPLOAD_BYTES, f"The text file {shorten(name, 60)}"),
                      name)


def parse_lines(data: bytes, name: str) -> list[str]:
    """The texts of a file, one a line (blank lines skipped): at most :data:`MAX_TEXTS`, each at most
    :data:`EVALUATION_EXAMPLE_CHARS` characters."""
    shown = shorten(Path(name).name or "the text file", 60)
    texts = []
    for number, line in enumerate(check_bytes(data, shown).splitlines(), start=1):
        if not line.strip():
            continue
        if len(line) > EVALUATION_EXAMPLE_CHARS:
            raise ExplorerError(f"Line {number} of {shown} has {len(line):,} characters; at most "
                                f"{EVALUATION_EXAMPLE_CHARS:,} a text: shorten it.")
        texts.append(line.strip())
        if len(texts) > MAX_TEXTS:
            raise ExplorerError(f"{shown} holds more than {MAX_TEXTS:,} texts: a projector draws at most that many.")
    if not texts:
        raise ExplorerError(f"{shown} holds no text: write one sentence a line.")
    return texts


def read_lines(path: str | Path) -> list[str]:
    """The texts of a file named on the command line, one a line."""
    name = Path(path).name
    return parse_lines(userfiles.read_path(path, userfiles.MAX_UPLOAD_BYTES, f"The text file {shorten(name, 60)}"),
                       name)
