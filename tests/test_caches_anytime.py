"""app.caches.anytime: an answer cut by its request's budget is returned but never kept, a complete one is."""

from __future__ import annotations

from dataclasses import dataclass

from app.caches.anytime import cache_complete, is_cut
from explorer.core.notices import Notice


@dataclass(frozen=True)
class _Result:
    value: int
    notices: tuple[Notice, ...] = ()


def test_a_cut_answer_is_computed_again_and_a_complete_one_is_kept() -> None:
    calls: list[int] = []

    @cache_complete(max_entries=4, show_spinner=False)
    def answer(n: int) -> _Result:
        calls.append(n)
        return _Result(n, (Notice("stopped", "cut"),) if n == 1 else ())

    assert answer(1).value == 1 and answer(1).value == 1 and calls == [1, 1]  # cut: asked again, computed again
    assert answer(2).value == 2 and answer(2).value == 2 and calls == [1, 1, 2]  # complete: kept
    answer.clear()


def test_a_cut_part_is_found_inside_what_a_page_gets() -> None:
    cut = _Result(1, (Notice("stopped", "cut"),))
    assert is_cut(cut) and is_cut((_Result(0), cut)) and not is_cut((_Result(0), [_Result(2)]))
    assert is_cut(_Result(0, (Notice("info", "fine"),))) is False
