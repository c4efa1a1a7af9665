"""One checked parse for data a user hands us: uploads, CLI files and stdin, JSON configs.

Everything here is bounded *before* the expensive step: a named file must be a regular file (a FIFO would block
the read forever, ``/dev/zero`` never ends, a socket cannot be opened: each is refused at once, by its kind), bytes
are read in chunks up to a limit (a 10 GB upload costs at most ``limit + 1`` bytes), JSON nesting depth is counted
without recursion before ``json.loads`` sees the text, integers longer than ``MAX_INT_DIGITS`` are
refused by the parser hook (a 5,000-digit integer would otherwise raise ValueError deep inside),
and every message names what was wrong and the allowed range.

>>> loads_json('{"model_type": "bert", "hidden_size": 768}')
{'model_type': 'bert', 'hidden_size': 768}
>>> loads_json('[' * 100 + ']' * 100)
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: The JSON is nested 100 levels deep; at most 32 levels are accepted.
>>> decode_text(b"caf\\xc3\\xa9", "the text file")
'café'
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from explorer.core.errors import ExplorerError, shorten

__all__ = ["MAX_CONFIG_BYTES", "MAX_DEPTH", "MAX_INT_DIGITS", "MAX_TEXT_BYTES", "MAX_UPLOAD_BYTES", "MAX_UPLOAD_MB",
           "decode_text", "json_depth", "loads_json", "read_limited", "read_path"]

MAX_CONFIG_BYTES = 1_000_000  # a real config.json is 1-5 KB; tokenizer.json files are not configs
MAX_TEXT_BYTES = 2_000_000  # text files for the CLI (the pages cut text at 50,000 characters anyway)
# The one upload limit, in MB: .streamlit/config.toml's server.maxUploadSize (which cannot import Python:
# tests/test_upload_limit.py checks it equals this), every uploader's max_upload_size and its text, the Lab's
# training-text cap (explorer.training.corpus.MAX_FILE_BYTES) and the README all come from here. Streamlit's
# uploader counts a MB as 10^6 bytes (2^20 on Windows) and refuses a larger file in the browser with its own
# message; its server counts 2^20. The library accepts the larger, so nothing the uploader lets through is refused.
MAX_UPLOAD_MB = 20
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 2**20
MAX_DEPTH = 32  # Hugging Face configs nest 2-3 levels (encoder/decoder sub-configs)
MAX_INT_DIGITS = 30  # 10^30 is far beyond any size a model has; longer integers are hostile input
_CHUNK = 1 << 16


def read_limited(stream: BinaryIO, limit: int, what: str) -> bytes:
    """Read at most ``limit`` bytes from ``stream`` in chunks; refuse (without reading on) beyond that."""
    parts: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = stream.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk if isinstance(chunk, bytes) else bytes(chunk))
        size += len(chunk)
    raise ExplorerError(f"{what} is larger than {limit:,} bytes: use a smaller file.")


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _not_regular(mode: int, path: str | Path, what: str) -> ExplorerError | None:
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    hint = "name a file" if kind == "a directory" else "save the text in a regular file and name that"
    return ExplorerError(f"{what} `{shorten(path)}` is {kind}, not a regular file: {hint}.")


def read_path(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of a user-named regular file, at most ``limit``. A FIFO, device, socket or directory is refused
    before any read (its type is checked with ``stat``, then again on the opened descriptor, which is opened
    without blocking: a FIFO with no writer would otherwise hang the open itself)."""
    try:
        if (refused := _not_regular(os.stat(path).st_mode, path, what)) is not None:
            raise refused
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            if (refused := _not_regular(os.fstat(fd).st_mode, path, what)) is not None:  # swapped since the stat
                raise refused
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        with os.fdopen(fd, "rb") as fh:
            return read_limited(fh, limit, what)
    except (OSError, ValueError) as err:  # ValueError: a NUL byte in the name
        raise ExplorerError(f"Cannot read {what} `{shorten(path)}`: {getattr(err, 'strerror', None) or err}.") from err


def decode_text(data: bytes, what: str) -> str:
    """UTF-8 text (a BOM is dropped); other encodings get a message instead of a traceback."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ExplorerError(f"{what} is not UTF-8 text (byte {err.start}): save it as UTF-8.") from err


def json_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` in JSON text, ignoring brackets inside strings (no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _bounded_int(literal: str) -> int:
    digits = len(literal.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise ExplorerError(f"The JSON holds an integer of {digits:,} digits; at most {MAX_INT_DIGITS} are accepted.")
    return int(literal)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value != value or value in (float("inf"), float("-inf")):
        raise ExplorerError("The JSON holds a number too large to represent: use ordinary values.")
    return value


def _no_constant(name: str) -> NoReturn:
    raise ExplorerError(f"The JSON holds {name}, which is not valid JSON: use ordinary numbers.")


def loads_json(text: str | bytes, what: str = "The JSON", limit: int = MAX_CONFIG_BYTES) -> Any:
    """Parse JSON with size, depth, integer-length and NaN/Infinity limits; one-line messages."""
    if isinstance(text, bytes):
        if len(text) > limit:
            raise ExplorerError(f"{what} is larger than {limit:,} bytes: use a smaller file.")
        text = decode_text(text, what)
    if len(text) > limit:
        raise ExplorerError(f"{what} is larger than {limit:,} characters: use a smaller file.")
    depth = json_depth(text)
    if depth > MAX_DEPTH:
        raise ExplorerError(f"{what} is nested {depth:,} levels deep; at most {MAX_DEPTH} levels are accepted.")
    try:
        return json.loads(text, parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise ExplorerError(f"{what} is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}).") from err
