"""explorer.core.userinput: the one rule set for typed token positions, the text-box check, and the one
grammar of blanks (``split_blanks``) that fill-mask, the decoder's fill and span infilling share."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.core.limits import POSITIONS_LIST_CHARS
from explorer.core.userinput import (
    MARKER,
    MAX_POSITIONS,
    SPAN_MARKER,
    parse_positions,
    require_text,
    split_blanks,
)


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
    assert parse_positions("1," * (POSITIONS_LIST_CHARS // 2), 100) == (1,)  # exactly at the limit
    with pytest.raises(ExplorerError, match="characters"):
        parse_positions("1," * (POSITIONS_LIST_CHARS // 2) + "1", 100)


def test_a_non_positive_length_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        parse_positions("1", 0)


def _check(text: object) -> str:
    return require_text(text, what="text", empty_hint="type a sentence.", max_chars=1_000, limit_note="demo")


@pytest.mark.parametrize("text", ["Hello 👋🏽 world", "القطة جلست", "<script>alert(1)</script>", "  padded  ",
                                  "x" * 1_000])
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


def _split(text, marker=MARKER, **kw):
    return split_blanks(text, **{"max_blanks": 5, "max_chars": 1_000, "marker": marker, **kw})


@pytest.mark.parametrize("text, pieces", [
    ("a [MASK] b", ("a ", " b")), ("a [mask] b <MASK> c", ("a ", " b ", " c")),  # any case: a blank is a blank
    ("a <mask> b ___ c ______", ("a ", " b ", " c ", "")), ("___", ("", "")),
    ("a __ b", None), ("a [MASK_1] b", None), ("a <extra_id_0> b", None),  # not generic blanks
])
def test_split_blanks_reads_the_generic_markers(text, pieces) -> None:
    if pieces is None:
        with pytest.raises(ExplorerError, match="No blank"):
            _split(text)
    else:
        assert _split(text) == pieces


def test_t5_sentinels_are_blanks_only_where_spans_are_filled() -> None:
    assert _split("a <extra_id_0> b <EXTRA_ID_12> c [mask]", SPAN_MARKER) == ("a ", " b ", " c ", "")
    with pytest.raises(ExplorerError, match=r"<extra_id_0>\)"):  # the hint names the sentinel where it counts
        _split("no blank", SPAN_MARKER)


@pytest.mark.parametrize("text, says", [
    ("", "The text is empty: type a sentence and put ___"), ("  \n\t", "is empty"), (None, "must be a string"),
    (42, "must be a string"), ("x" * 1_001, "1,001 characters; the limit is 1,000"),
    (" ___" * 6, r"has 6 blanks; the limit is 5 \(because\)\. Remove some"),
])
def test_split_blanks_refuses_with_what_to_do(text, says) -> None:
    with pytest.raises(ExplorerError, match=says):
        _split(text, why_cap="because")


def test_split_blanks_names_what_was_typed() -> None:
    with pytest.raises(ExplorerError, match="The prompt is empty"):
        _split(" ", what="prompt")
