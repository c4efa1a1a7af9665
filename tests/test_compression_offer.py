"""explorer.compression.offer: the one list of methods: every form and offered instance parses, the error list,
the CLI's help and the page's help name every form (mheads-N included), and the page's offers follow the list."""

from __future__ import annotations

import pytest

from explorer.compression import methods, offer


def test_every_offered_instance_and_default_parses_to_its_family() -> None:
    for f in offer.FORMS:
        for name in f.offered:
            assert methods.parse(name).kind == f.kind and methods.canonical(name) == name
    assert set(offer.DEFAULTS) <= set(offer.offered(exits=False, with_loss=False))
    assert set(offer.EXIT_DEFAULTS) <= set(offer.offered(exits=True, with_loss=False))


@pytest.mark.parametrize("text", [offer.valid_names(), offer.help_text(), offer.describe()])
def test_every_form_is_named(text: str) -> None:
    assert all(f.form in text for f in offer.FORMS)
    assert "mheads-N" in text


def test_the_page_offers_exit_speeds_apart_and_mheads_only_with_a_loss() -> None:
    copies, with_loss = offer.offered(False, False), offer.offered(False, True)
    assert not any(n.startswith("exit-") for n in copies + with_loss)
    assert all(n.startswith("exit-") for n in offer.offered(True, True))
    assert [n for n in with_loss if n not in copies] == ["mheads-25", "mheads-50"]


def test_fixed_names_and_patterns_come_from_the_list() -> None:
    assert list(methods.FIXED) == [f.form for f in offer.FORMS if not f.parameter]
    assert set(methods.PATTERNS) == {"prune", "heads", "mheads", "exit"}
    assert methods.parse("w4").amount == 4 and methods.parse("w8").amount == 8
