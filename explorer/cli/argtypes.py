"""Argparse helpers: numbers checked at parse time, and a text given inline or as a file.

``number``/``seed`` are ``type=`` functions: one clear line and exit 2 when wrong.
``text_source``/``read_source`` give a command ``--text`` or ``--text-file`` (any name): the one path
for file inputs, read by :func:`explorer.cli.textinput.read_text_file` (size checked before reading, UTF-8),
an empty file refused.

Every numeric option of every command goes through :func:`number` (or :func:`seed`), so a negative
seed, NaN, infinity, ``1e-45`` or a 20-digit count never reaches numpy or torch as a traceback.
Echoed values are cut (:func:`explorer.core.errors.shorten`).

argparse puts "argument --top-p: " in front of each message.

>>> number(int, 0, 10)("3")
3
>>> number(float, 0, 1, lo_open=True)("0")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be more than 0 and at most 1, not 0
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from explorer.cli.textinput import read_text_file
from explorer.core.errors import ExplorerError, shorten

__all__ = ["SEED_MAX", "number", "read_source", "seed", "text_source"]

SEED_MAX = 2**32 - 1  # numpy's and torch's generators take seeds in [0, 2**32)


def _show(bound: float) -> str:
    return f"{bound:,}" if isinstance(bound, int) else f"{bound:g}"


def _parse(kind: type, text: str) -> int | float:
    what = "a whole number" if kind is int else "a number"
    try:
        value = kind(text.strip())
    except (ValueError, OverflowError) as err:
        raise argparse.ArgumentTypeError(f"must be {what}, not {shorten(text)!r}") from err
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, not {shorten(text)!r}")
    return value


def number(kind: type, lo: float, hi: float, *, lo_open: bool = False) -> Callable[[str], int | float]:
    """An argparse type: a number of ``kind`` (int or float) in [lo, hi] ((lo, hi] with ``lo_open``)."""
    def parse(text: str) -> int | float:
        value = _parse(kind, text)
        if (value <= lo if lo_open else value < lo) or value > hi:
            low = f"more than {_show(lo)}" if lo_open else f"at least {_show(lo)}"
            raise argparse.ArgumentTypeError(f"must be {low} and at most {_show(hi)}, not {shorten(text)}")
        return value
    parse.__name__ = kind.__name__  # argparse names the type in its own messages
    return parse


def seed() -> Callable[[str], int | float]:
    """A random seed: a whole number from 0 to 2**32 - 1 (numpy refuses negative seeds with a traceback)."""
    return number(int, 0, SEED_MAX)


def text_source(parser: argparse.ArgumentParser, name: str = "text", *, required: bool = True,
                help: str = "the text") -> None:
    """Add ``--NAME TEXT`` and ``--NAME-file PATH`` (exactly one when ``required``)."""
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument(f"--{name}", help=help)
    group.add_argument(f"--{name}-file", metavar="PATH", help=f"read {help} from this UTF-8 file")


def read_source(args: argparse.Namespace, name: str = "text") -> str:
    """The text of ``--NAME``, else of ``--NAME-file`` (an ExplorerError when neither was given)."""
    path = getattr(args, f"{name.replace('-', '_')}_file", None)
    if path is None:
        text = getattr(args, name.replace("-", "_"), None)
        if text is None:  # only when text_source(required=False): every caller needs a text
            raise ExplorerError(f"Give the text with --{name} TEXT or --{name}-file PATH.")
        return str(text)
    text = read_text_file(path, f"--{name}-file")
    if not text.strip():
        raise ExplorerError(f"--{name}-file {shorten(path)} is empty: put the text in it, or use --{name}.")
    return text
