"""Lineage: the catalog's derived_from forms a DAG of known variants with allowed relations."""

from __future__ import annotations

import dataclasses

import networkx as nx
import pytest

from explorer.architecture import catalog, lineage
from explorer.core.errors import ExplorerError


def test_graph_is_a_dag_over_the_whole_catalog():
    g = lineage.graph()
    assert nx.is_directed_acyclic_graph(g)
    assert set(g) == set(catalog.keys())


def test_every_parent_exists_and_every_relation_is_allowed():
    keys = set(catalog.keys())
    for v in catalog.load_catalog().values():
        for parent in v.derived_from:
            assert set(parent) == {"key", "relation"}, v.key
            assert parent["key"] in keys, (v.key, parent)
            assert parent["key"] != v.key
            assert parent["relation"] in lineage.RELATIONS, (v.key, parent)


def test_roots_are_the_variants_without_parents():
    g = lineage.graph()
    roots = {n for n in g if g.in_degree(n) == 0}
    assert roots == {v.key for v in catalog.load_catalog().values() if not v.derived_from}
    assert {"bert-base", "gpt"} <= roots


def test_months_are_calendar_months_and_parents_are_not_later():
    variants = catalog.load_catalog()
    for v in variants.values():
        assert 1 <= v.month <= 12, v.key
    for parent, child in lineage.graph().edges:
        # a smaller sibling can be published in the same paper, never before its parent's paper
        assert lineage.publication_date(variants[parent]) <= lineage.publication_date(variants[child]), (parent, child)


def test_publication_date_uses_the_month():
    assert lineage.publication_date(catalog.get_variant("bert-base")) == pytest.approx(2018 + 9 / 12)


def test_layout_gives_every_variant_its_own_lane():
    result = lineage.lineage()
    lanes = [n["y"] for n in result.nodes]
    assert len(set(lanes)) == len(lanes) == len(catalog.keys())
    assert len(result.edges) == sum(len(v.derived_from) for v in catalog.load_catalog().values())
    assert result.to_dict()["edges"][0].keys() == {"parent", "child", "relation"}


def _with(key: str, derived_from) -> dict[str, catalog.Variant]:
    variants = dict(catalog.load_catalog())
    variants[key] = dataclasses.replace(variants[key], derived_from=tuple(derived_from))
    return variants


@pytest.mark.parametrize("bad, message", [
    ([{"key": "no-such-model", "relation": "distilled from"}], "unknown variant"),
    ([{"key": "bert-large", "relation": "inspired by"}], "unknown relation"),
])
def test_bad_lineage_data_gets_a_message(bad, message):
    with pytest.raises(ExplorerError, match=message):
        lineage.graph(_with("bert-base", bad))


def test_a_cycle_is_refused():
    with pytest.raises(ExplorerError, match="cycle"):
        lineage.graph(_with("bert-base", [{"key": "bert-large", "relation": "smaller version of"}]))
