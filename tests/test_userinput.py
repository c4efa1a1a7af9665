"""explorer.core.userinput: the one rule set for typed token positions, and the text-box check."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.core.userinput import MAX_POSITIONS, MAX_POSITIONS_CHARS, parse_positions, require_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", ()), ("   ", ()), (None, ()), ("5, 17 3", (3, 5, 17)), ("9;9,9", (9,)), (" 17, 5;5 ", (5, 17)),
     ("0", (0,)), ("99", (99,)), ("007", (7,)), ("1,\t2\n3", (1, 2, 3))],
)
def test_parse_positions_accepts(text, expected: tuple[int, ...]) -> None:
    assert parse_positions(text, 100) == expected


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("x" * 50_000, "50,000 characters"),
        ("5, 🙂", "not a token position"),
        ("مرحبا", "not a token position"),
        ("<script>alert(1)</script>", "not a token position"),
        ("١٢", "not a token position"),  # Arabic-Indic digits: isdigit() but not a position we accept
        ("-3", "not a token position"),
        ("+3", "not a token position"),
        ("1.5", "not a token position"),
        ("3,,x", "not a token position"),
        ("five", "separated by commas"),
        ("150", "past the end of a 100-token input"),
        (" ".join(str(i) for i in range(70)), f"at most {MAX_POSITIONS}"),
        (42, "must be text"),
    ],
)
def test_parse_positions_refuses_with_one_clear_message(text, match: str) -> None:
    with pytest.raises(ExplorerError, match=match):
        parse_positions(text, 100)


@pytest.mark.parametrize("text", ["abc", "150", "-1"])
def test_every_refusal_names_the_allowed_range(text: str) -> None:
    with pytest.raises(ExplorerError, match="from 0 to 99"):
        parse_positions(text, 100)


def test_refused_pieces_are_quoted_short() -> None:
    with pytest.raises(ExplorerError) as err:
        parse_positions("<b>" + "x" * 500 + "</b>", 100)
    assert len(str(err.value)) < 200 and "'<b>xxxxxxxxxxxxxxxxx...'" in str(err.value)


def test_the_length_limit_is_checked_before_parsing() -> None:
    assert parse_positions("1," * (MAX_POSITIONS_CHARS // 2), 100) == (1,)  # exactly at the limit
    with pytest.raises(ExplorerError, match="characters"):
        parse_positions("1," * (MAX_POSITIONS_CHARS // 2) + "1", 100)


def test_a_non_positive_length_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        parse_positions("1", 0)


def _check(text: object) -> str:
    return require_text(text, what="text", empty_hint="type a sentence.", max_chars=1_000, limit_note="demo")


@pytest.mark.parametrize("text", ["Hello 👋🏽 world", "القطة جلست", "<script>alert(1)</script>", "  padded  ", "x" * 1_000])
def test_require_text_keeps_good_text_unchanged(text: str) -> None:
    assert _check(text) == text


@pytest.mark.parametrize(
    ("text", "match"),
    [("", "is empty: type a sentence."), (" \n\t ", "is empty"), ("\u3000", "is empty"),
     ("x" * 1_001, "has 1,001 characters; paste at most 1,000 \\(demo\\)"), (None, "must be a string, not NoneType"),
     (b"bytes", "must be a string, not bytes")],
)
def test_require_text_refuses_with_one_clear_message(text, match: str) -> None:
    with pytest.raises(ExplorerError, match=match):
        _check(text)
