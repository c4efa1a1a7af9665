"""explorer.core.memorypolicy: every share of memory in one table, each applied where the table says."""

from __future__ import annotations

import importlib

import pytest

from explorer.core import memorypolicy
from explorer.core.memorypolicy import POLICY


def test_every_share_is_a_fraction_with_what_it_bounds() -> None:
    for name, share in POLICY.items():
        assert name.endswith("_SHARE") and 0 < share.value <= 1
        assert share.of and share.bounds and share.applied_in.startswith("explorer.")


@pytest.mark.parametrize("name", sorted(POLICY))
def test_each_share_is_exported_and_imported_where_it_is_applied(name: str) -> None:
    share = POLICY[name]
    assert getattr(memorypolicy, name) == share.value and name in memorypolicy.__all__
    home = importlib.import_module(share.applied_in)
    assert getattr(home, name) is getattr(memorypolicy, name)  # imported, not a second copy of the number


def test_the_values_are_the_ones_the_modules_had() -> None:
    assert {name: share.value for name, share in POLICY.items()} == {
        "MODEL_MEMORY_SHARE": 0.7, "CPU_MEMORY_SHARE": 0.30, "ACCELERATOR_MEMORY_SHARE": 0.5,
        "MEMORY_PLAN_SHARE": 0.5, "MODEL_CACHE_SHARE": 0.5, "RESIDENT_SHARE": 0.1}
