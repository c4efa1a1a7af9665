"""Task files: every malformed case refused with one message naming the line, before any model runs."""

from __future__ import annotations

import json
import os

import pytest

from explorer.core.errors import ExplorerError
from explorer.core.limits import EVALUATION_EXAMPLE_CHARS, EVALUATION_TEXT_CHARS
from explorer.core.userfiles import MAX_UPLOAD_BYTES
from explorer.evaluation import bundled, taskfile
from explorer.evaluation.task import CHOICE, CLOZE

GOOD = {"context": "2 + 2 =", "choices": ["4", "5", "22"], "answer": 0}


def _lines(*objects: object) -> bytes:
    return "\n".join(o if isinstance(o, str) else json.dumps(o) for o in objects).encode("utf-8")


def _refused(data: bytes, *needles: str) -> str:
    with pytest.raises(ExplorerError) as err:
        taskfile.parse_task(data, "mine.jsonl")
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message
    for needle in needles:
        assert needle in message, message
    return message


@pytest.mark.parametrize("bad, needles", [
    (_lines(GOOD, '{"context": "x", "choices": ["a", "b"], "answer": 0', GOOD),
     ("Line 2 of mine.jsonl is not valid JSON", "column")),
    (_lines(GOOD, GOOD, "not json at all"), ("Line 3 of mine.jsonl is not valid JSON",)),
    (_lines(GOOD, {"choices": ["a", "b"], "answer": 0}), ("Line 2 of mine.jsonl lacks 'context'",)),
    (_lines({"context": "x", "answer": 0}), ("Line 1", "lacks", "'choices'")),
    (_lines({"context": "x", "choices": ["a", "b"]}), ("Line 1", "no \"answer\"")),
    (_lines(GOOD, {**GOOD, "answer": 3}), ("Line 2", "answer 3 is out of range", "0 to 2")),
    (_lines({**GOOD, "answer": -1}), ("Line 1", "out of range")),
    (_lines({**GOOD, "answer": "seven"}), ("Line 1", "neither an index nor one of the choices")),
    (_lines({**GOOD, "answer": True}), ("Line 1", "neither an index")),
    (_lines({**GOOD, "choices": []}), ("Line 1 of mine.jsonl has 0 choices", "2 to 64")),
    (_lines({**GOOD, "choices": ["only"]}), ("has 1 choices",)),
    (_lines({**GOOD, "choices": [str(i) for i in range(1000)]}), ("has 1,000 choices", "2 to 64")),
    (_lines({**GOOD, "choices": ["a", 7]}), ("\"choices[1]\" must be text",)),
    (_lines({**GOOD, "choices": "a b"}), ("\"choices\" must be a list",)),
    (_lines({**GOOD, "choices": ["a", ""]}), ("\"choices[1]\" is empty",)),
    (_lines({"context": 5, "continuation": " x"}), ("\"context\" must be text",)),
    (_lines({"context": "x", "continuation": ""}), ("\"continuation\" is empty",)),
    (_lines({"context": "x\u0000y", "continuation": " z"}), ("NUL",)),
    (b'{"context": "\\ud800", "continuation": " z"}', ("lone surrogate",)),
    (_lines([1, 2, 3]), ("Line 1 of mine.jsonl is a JSON list, not an object",)),
    (_lines(GOOD, {"context": "x", "continuation": " y"}), ("Line 2", "cloze example but line 1 is a choice",)),
    (_lines({"context": "x" * EVALUATION_EXAMPLE_CHARS, "continuation": " y"}), ("Line 1", "at most 20,000")),
    (b"", ("holds no examples",)),
    (b"\n  \n\t\n", ("holds no examples",)),
    (("[" * 100 + "]" * 100).encode(), ("nested 100 levels",)),
    (_lines(GOOD, '{"context": "x", "choices": ["a", "b"], "answer": 0, "w": NaN}'),
     ("Line 2 of mine.jsonl holds NaN",)),
    (_lines(GOOD, GOOD, '{"context": "x", "choices": ["a", "b"], "answer": 1' + "0" * 40 + "}"),
     ("Line 3 of mine.jsonl holds an integer of 41 digits",)),
    (_lines('{"context": "x", "choices": ["a", "b"], "answer": 0, "w": 1e999}'),
     ("Line 1 of mine.jsonl holds a number too large",)),
], ids=["unclosed", "not-json", "no-context", "no-choices", "no-answer", "answer-range", "answer-negative",
        "answer-text", "answer-bool", "zero-choices", "one-choice", "1000-choices", "choice-not-text",
        "choices-not-list", "empty-choice", "context-not-text", "empty-continuation", "nul", "surrogate", "list",
        "mixed-kinds", "huge-example", "empty", "blank", "deep", "nan", "huge-integer", "infinity"])
def test_each_malformed_case_has_one_message_naming_the_line(bad: bytes, needles: tuple[str, ...]) -> None:
    _refused(bad, *needles)


def test_binary_utf16_and_oversized_files_are_refused_by_their_bytes() -> None:
    text = _lines(GOOD).decode()
    _refused(b"\xff\xfe" + text.encode("utf-16-le"), "UTF-16", "save it as UTF-8")
    _refused(text.encode("utf-16-le"), "UTF-16")  # no byte-order mark: the NULs of every other byte say it
    _refused(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary")
    _refused(b"\xc3\x28 not utf-8", "not UTF-8")
    _refused(b" " * (MAX_UPLOAD_BYTES + 1), f"at most {MAX_UPLOAD_BYTES:,}")


def test_a_100_mb_file_is_refused_without_reading_it(tmp_path) -> None:
    big = tmp_path / "huge.jsonl"
    with big.open("wb") as fh:  # sparse: 100 MB on paper, nothing on disk
        fh.truncate(100 * 10**6)
    with pytest.raises(ExplorerError, match="larger than"):
        taskfile.read_task(big)
    with pytest.raises(ExplorerError, match="is a directory"):
        taskfile.read_task(tmp_path)
    if hasattr(os, "mkfifo"):  # a FIFO would block a plain read forever
        os.mkfifo(tmp_path / "pipe")
        with pytest.raises(ExplorerError, match="named pipe"):
            taskfile.read_task(tmp_path / "pipe")


def test_a_good_file_keeps_its_fields_line_numbers_and_kind() -> None:
    data = _lines({**GOOD, "topic": "sums", "level": 2, "hard": False, "tags": ["x"]}, "",
                  {**GOOD, "answer": "22", "topic": "<b>html</b>"})
    task = taskfile.parse_task(b"\xef\xbb\xbf" + data, "sums.jsonl")  # a BOM is dropped
    assert task.kind == CHOICE and [ex.line for ex in task.examples] == [1, 3]
    assert task.examples[1].answer == 2  # an answer given as the choice's text
    assert task.fields == ("topic", "level", "hard")  # a list is not a field to slice by
    assert task.examples[1].field("topic") == "<b>html</b>"  # kept as typed: pages escape it
    assert task.examples[0].continuations() == (" 4", " 5", " 22")


def test_cloze_continuations_are_scored_verbatim_and_repeats_are_noticed() -> None:
    cloze = taskfile.parse_task(_lines({"context": "Once upon a", "continuation": " time"}), "c.jsonl")
    assert cloze.kind == CLOZE and cloze.examples[0].continuations() == (" time",)
    repeated = taskfile.parse_task(_lines({**GOOD, "choices": ["4", "4"]}), "r.jsonl")
    assert repeated.notices and "repeat a choice" in repeated.notices[0].text


def test_choices_with_their_own_leading_space_are_scored_as_lm_eval_scores_them_and_said() -> None:
    """lm-eval adds its target_delimiter (" ") before every choice, whatever it starts with: two spaces here."""
    task = taskfile.parse_task(_lines(GOOD, {**GOOD, "choices": [" 4", " 5"]}), "spaced.jsonl")
    assert task.examples[1].continuations() == ("  4", "  5")
    assert any("starts with a space (first on line 2)" in n.text and "two spaces" in n.text for n in task.notices)
    assert not taskfile.parse_task(_lines(GOOD), "plain.jsonl").notices


def test_too_many_examples_are_refused() -> None:
    many = "\n".join([json.dumps(GOOD)] * (taskfile.MAX_EXAMPLES + 1)).encode()
    _refused(many, "more than 5,000 examples")


def test_perplexity_texts_and_line_files_have_their_caps() -> None:
    with pytest.raises(ExplorerError, match="at most 200,000"):
        taskfile.parse_text(b"a" * (EVALUATION_TEXT_CHARS + 1), "long.txt")
    with pytest.raises(ExplorerError, match="empty"):
        taskfile.parse_text(b" \n\t", "blank.txt")
    with pytest.raises(ExplorerError, match="UTF-16"):
        taskfile.parse_text("hello there".encode("utf-16"), "u16.txt")
    assert taskfile.parse_lines(b"one\n\n two \n", "l.txt") == ["one", "two"]
    with pytest.raises(ExplorerError, match="Line 2 of l.txt has 20,001"):
        taskfile.parse_lines(b"ok\n" + b"x" * (EVALUATION_EXAMPLE_CHARS + 1), "l.txt")
    with pytest.raises(ExplorerError, match="more than 5,000 texts"):
        taskfile.parse_lines(b"a\n" * (taskfile.MAX_TEXTS + 1), "l.txt")


def test_the_bundled_files_are_well_formed_and_say_where_they_come_from() -> None:
    mc, cloze = bundled.task("multiple_choice"), bundled.task("cloze")
    assert (mc.kind, len(mc.examples), cloze.kind, len(cloze.examples)) == (CHOICE, 26, CLOZE, 22)
    assert mc.source.startswith("written here") and set(mc.fields) == {"topic", "difficulty"}
    # the right answer's position rotates: always picking one position scores a quarter at most
    positions = [ex.answer for ex in mc.examples]
    assert max(positions.count(k) for k in range(4)) <= 7
    assert all(ex.continuations()[0].startswith(" ") for ex in cloze.examples)
    assert len(bundled.text()) > 1000 and len(bundled.lines()) == 30
    assert "written here" in (bundled.DIRECTORY / "README.md").read_text(encoding="utf-8")
    with pytest.raises(ExplorerError, match="No bundled task"):
        bundled.task("nope")
