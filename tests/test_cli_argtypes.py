"""``explorer.cli.argtypes``: ``--NAME`` / ``--NAME-file`` read into one text, or a message."""

from __future__ import annotations

import argparse

import pytest

from explorer.cli.argtypes import read_source, text_source
from explorer.core.errors import ExplorerError


def _parser(required: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    text_source(parser, "context", required=required)
    return parser


def test_text_or_file(tmp_path):
    assert read_source(_parser().parse_args(["--context", "Paris is in France."]), "context") == "Paris is in France."
    path = tmp_path / "context.txt"
    path.write_text("From a file.", encoding="utf-8")
    assert read_source(_parser().parse_args(["--context-file", str(path)]), "context") == "From a file."


def test_neither_given_is_a_message_not_none():
    """An optional source left out is a message naming both ways to give it, not a None for the library."""
    args = _parser(required=False).parse_args([])
    with pytest.raises(ExplorerError, match="--context TEXT or --context-file PATH"):
        read_source(args, "context")


def test_empty_file_is_refused(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("  \n", encoding="utf-8")
    with pytest.raises(ExplorerError, match="is empty"):
        read_source(_parser().parse_args(["--context-file", str(path)]), "context")
