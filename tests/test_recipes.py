"""Recipes: every lab objective names a real variant and a real strategy of explorer.objectives."""

from __future__ import annotations

import pytest

from explorer import objectives
from explorer.architecture import catalog
from explorer.core.errors import ExplorerError
from explorer.training import recipes


@pytest.mark.parametrize("name", list(recipes.RECIPES))
def test_every_recipe_names_a_catalog_variant_and_an_objective_strategy(name: str) -> None:
    r = recipes.get(name)
    assert catalog.get_variant(r.variant)
    assert r.strategy in objectives.STRATEGIES
    assert r.sentence is None or r.sentence in objectives.STRATEGIES


def test_aliases_and_case_resolve() -> None:
    assert recipes.get(" MLM ").name == "mlm" and recipes.get("gpt2").name == "gpt"


@pytest.mark.parametrize("bad", ["", "bertt", "<script>", "x" * 5000])
def test_unknown_objectives_list_the_valid_ones(bad: str) -> None:
    with pytest.raises(ExplorerError, match="Choose one of: mlm") as err:
        recipes.get(bad)
    assert len(str(err.value)) < 300


def test_sizes_are_knob_overrides_and_unknown_sizes_are_refused() -> None:
    assert recipes.overrides("mlm", "tiny")["hidden_size"] == 128
    assert recipes.overrides("albert", "small")["embedding_size"] == 128
    with pytest.raises(ExplorerError, match="tiny, small"):
        recipes.overrides("mlm", "huge")
