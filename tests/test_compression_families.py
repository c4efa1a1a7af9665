"""explorer.compression.families: the one list of methods: every form and offered instance parses, the error list,
the CLI's help and the page's help name every form (mheads-N included), and the page's offers follow the list."""

from __future__ import annotations

import pytest

from explorer.compression import families, methods


def test_every_offered_instance_and_default_parses_to_its_family() -> None:
    for f in families.FAMILIES:
        for name in f.offered:
            assert methods.parse(name).kind == f.kind and methods.canonical(name) == name
    assert set(families.DEFAULTS) <= set(families.offered(exits=False, with_loss=False))
    assert set(families.EXIT_DEFAULTS) <= set(families.offered(exits=True, with_loss=False))


@pytest.mark.parametrize("text", [families.valid_names(), families.help_text(), families.describe()])
def test_every_form_is_named(text: str) -> None:
    assert all(f.form in text for f in families.FAMILIES)
    assert "mheads-N" in text


def test_the_page_offers_exit_speeds_apart_and_mheads_only_with_a_loss() -> None:
    copies, with_loss = families.offered(False, False), families.offered(False, True)
    assert not any(n.startswith("exit-") for n in copies + with_loss)
    assert all(n.startswith("exit-") for n in families.offered(True, True))
    assert [n for n in with_loss if n not in copies] == ["mheads-25", "mheads-50"]


def test_fixed_names_and_patterns_come_from_the_list() -> None:
    assert list(methods.FIXED) == [f.form for f in families.FAMILIES if not f.parameter]
    assert set(methods.PATTERNS) == {"prune", "heads", "mheads", "exit"}
    assert methods.parse("w4").amount == 4 and methods.parse("w8").amount == 8
