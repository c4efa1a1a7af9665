"""C4's cleaning rules (explorer.training.c4): each rule on a page written to trip it alone, the paper's order,
three-sentence de-duplication, the bundled corpus, and bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core import limits
from explorer.core.errors import ExplorerError
from explorer.training import c4

FIVE = "One sentence here. Two sentences here. Three sentences here. Four sentences here. Five sentences here."


def _removed(report: c4.Report) -> dict[str, tuple[int, int]]:
    return {r.rule: (r.lines, r.pages) for r in report.removed if r.lines or r.pages}


@pytest.mark.parametrize("page, rule, counts", [
    (FIVE + "\nA menu without an end", "terminal punctuation", (1, 0)),
    (FIVE + "\nOkay then.", "fewer than 3 words", (1, 0)),
    (FIVE + "\nThis site needs JavaScript enabled to work.", "Javascript", (1, 0)),
    ("Too short. Only two sentences.", "fewer than 5 sentences", (0, 1)),
    (FIVE + " Lorem ipsum dolor sit amet.", "lorem ipsum", (0, 1)),
    (FIVE + " Call it with {x} as the value.", "curly bracket", (0, 1)),
])
def test_each_rule_removes_what_it_says_and_nothing_else(page: str, rule: str, counts: tuple[int, int]) -> None:
    assert _removed(c4.clean(page)) == {rule: counts}


def test_a_bad_word_drops_the_page_and_is_never_shown() -> None:
    word = sorted(c4.bad_words()[0])[0]
    report = c4.clean(f"{FIVE} And then {word} appeared.")
    bad = next(r for r in report.removed if r.rule == "bad word")
    assert (bad.pages, bad.examples) == (1, []) and report.pages_kept == 0


def test_line_rules_run_before_page_rules() -> None:
    """A page of five sentences plus a line without an end: the line goes, the page stays."""
    report = c4.clean(FIVE + "\nClick here")
    assert report.pages_kept == 1 and report.kept == FIVE


def test_a_repeated_three_sentence_span_is_kept_once() -> None:
    other = "Six is new here. Seven is new too."
    report = c4.clean(f"{FIVE}\n\n{FIVE} {other}")
    assert report.kept.split("\n\n") == [FIVE, other] and _removed(report) == {"repeated three-sentence span": (5, 0)}


def test_the_bundled_corpus_loses_code_pages_and_keeps_prose() -> None:
    report = c4.clean_bundled()
    removed = {r.rule: r for r in report.removed}
    assert report.pages_in == 396 and 0 < report.pages_kept < report.pages_in
    assert removed["curly bracket"].pages > 0 and removed["terminal punctuation"].lines > 0
    assert 0.3 < report.characters_kept / report.characters_in < 0.7  # measured 47%
    assert any("langdetect" in note for note in report.notes)


@pytest.mark.parametrize("text, said", [("", "empty"), ("   \n\n  ", "empty"), (None, "must be|not NoneType"),
                                        ("x" * (limits.C4_PASTE_CHARS + 1), "characters")])
def test_bad_input_is_one_clear_message(text, said: str) -> None:
    with pytest.raises(ExplorerError, match=said):
        c4.clean(text)


def test_html_and_unicode_are_text_like_any_other() -> None:
    page = "<script>alert(1)</script> is not a sentence\n" + FIVE.replace("One", "Ünïcödé 🙂 one")
    report = c4.clean(page)
    assert report.pages_kept == 1 and "<script>" not in report.kept


def test_what_is_kept_is_never_more_than_what_was_given() -> None:
    """Two pages kept whole: the count is of their characters, not of the blank line shown between them."""
    other = "Six is here. Seven is here. Eight is here. Nine is here. Ten is here."
    report = c4.clean(f"{FIVE}\n\n{other}")
    assert report.pages_kept == 2 and report.characters_kept == report.characters_in == len(FIVE) + len(other)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["One two three.", "Four five six seven!", "x", "Eight is late?",
                                          "Nine   ten  eleven.", "{ code }.", "  Spaced   out words here.  "]),
                         min_size=1, max_size=8).map("\n".join), min_size=1, max_size=5))
def test_kept_and_removed_characters_never_exceed_the_given(pages: list[str]) -> None:
    report = c4.clean_pages(pages)
    assert report.characters_kept <= report.characters_in
    assert report.characters_kept + sum(r.characters for r in report.removed) <= report.characters_in
