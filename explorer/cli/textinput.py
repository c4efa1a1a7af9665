"""Text from the command line: arguments checked to be UTF-8, standard input and files read with a size bound.

Every command's text arrives through these: ``main`` checks every argument with :func:`check_utf8`, and a command
that reads ``-`` or a file uses :func:`read_stdin` or :func:`read_text_file` (the bound and the decoding are
:mod:`explorer.core.userfiles`'s).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from explorer.core import userfiles
from explorer.core.errors import ExplorerError

__all__ = ["check_utf8", "read_stdin", "read_text_file"]


def check_utf8(args: argparse.Namespace) -> None:
    """Every text argument must be UTF-8: argv bytes that are not arrive as lone surrogates, which
    tokenizers reject with a TypeError deep inside; one line here instead."""
    for name, value in vars(args).items():
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, str):
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError as err:
                    raise ExplorerError(f"--{name.replace('_', '-')} is not UTF-8 text: retype it or "
                                        "convert the file it came from to UTF-8.") from err


def read_stdin(what: str = "Standard input") -> str:
    """Standard input as text: at most ``userfiles.MAX_TEXT_BYTES`` read (``< /dev/zero`` stops there), UTF-8."""
    binary = getattr(sys.stdin, "buffer", None)
    if binary is None:  # already text (a test's StringIO, an embedding host): bound the characters instead
        text = sys.stdin.read(userfiles.MAX_TEXT_BYTES + 1)
        if len(text) > userfiles.MAX_TEXT_BYTES:
            raise ExplorerError(f"{what} is larger than {userfiles.MAX_TEXT_BYTES:,} characters: use a smaller file.")
        return text
    return userfiles.decode_text(userfiles.read_limited(binary, userfiles.MAX_TEXT_BYTES, what), what)


def read_text_file(path: str | Path, what: str) -> str:
    """A text file named on the command line: size-limited before reading, UTF-8."""
    return userfiles.decode_text(userfiles.read_path(path, userfiles.MAX_TEXT_BYTES, what), what)
