"""explorer.core.userfiles: bounded reads and the checked JSON parse (hostile input gives one message)."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.errors import ExplorerError
from explorer.core.userfiles import (
    MAX_DEPTH,
    MAX_INT_DIGITS,
    decode_text,
    json_depth,
    loads_json,
    read_limited,
    read_path,
)


class _Endless(io.RawIOBase):
    """Like /dev/zero: counts what is read so the test proves reading stops at the limit."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def read(self, n: int = -1) -> bytes:
        n = 1 << 20 if n is None or n < 0 else n
        self.read_bytes += n
        return b"\0" * n


def test_endless_stream_is_refused_after_limit_plus_one_bytes() -> None:
    stream = _Endless()
    with pytest.raises(ExplorerError, match="larger than 1,000 bytes"):
        read_limited(stream, 1000, "The upload")
    assert stream.read_bytes == 1001


def test_small_stream_is_read_whole() -> None:
    assert read_limited(io.BytesIO(b"abc"), 3, "x") == b"abc"


def test_read_path_messages(tmp_path) -> None:
    with pytest.raises(ExplorerError, match="is a directory"):
        read_path(tmp_path, 10, "The text file")
    with pytest.raises(ExplorerError, match="Cannot read"):
        read_path(tmp_path / "missing.txt", 10, "The text file")
    (tmp_path / "a.txt").write_bytes(b"hello")
    assert read_path(tmp_path / "a.txt", 10, "x") == b"hello"


def test_non_utf8_bytes_get_a_message() -> None:
    with pytest.raises(ExplorerError, match="not UTF-8"):
        decode_text(b"\xff\xfe\x00bad", "The text file")
    assert decode_text("\ufeffhé".encode(), "x") == "hé"


@pytest.mark.parametrize("text, match", [
    ("[" * 100_000, "nested 100,000 levels"),
    ('{"a": ' + "9" * 5000 + "}", f"at most {MAX_INT_DIGITS}"),
    ('{"a": NaN}', "NaN"),
    ('{"a": Infinity}', "Infinity"),
    ('{"a": 1e999}', "too large"),
    ('{"a": ', "not valid JSON"),
    ("", "not valid JSON"),
])
def test_hostile_json_gives_one_line(text: str, match: str) -> None:
    with pytest.raises(ExplorerError, match=match) as info:
        loads_json(text)
    assert "\n" not in str(info.value)


def test_size_limit_before_parsing() -> None:
    with pytest.raises(ExplorerError, match="larger than 10 bytes"):
        loads_json(b'{"a": "' + b"x" * 100 + b'"}', limit=10)


def test_brackets_inside_strings_do_not_count() -> None:
    assert json_depth('{"a": "[[[[{{{{\\"]]"}') == 1
    assert loads_json('{"a": "' + "[" * 1000 + '"}') == {"a": "[" * 1000}


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers(-10**29, 10**29)
                    | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(), lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids), max_leaves=30))
def test_ordinary_json_round_trips(value) -> None:
    text = json.dumps(value)
    if json_depth(text) <= MAX_DEPTH:
        assert loads_json(text) == json.loads(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_gives_a_value_or_an_explorer_error(text: str) -> None:
    try:
        loads_json(text)
    except ExplorerError as err:
        assert str(err)
