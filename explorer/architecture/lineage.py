"""Lineage: who builds on whom in the catalog, as a directed graph with a family-tree layout.

Each catalog variant names its parents in ``derived_from`` (``[{"key", "relation"}]``; the
roots have none). Edges run parent -> child. The layout puts each variant at its publication
date on x (year + month) and spreads the variants of one period over y, so the tree reads as a
time line from left to right.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

import networkx as nx

from explorer.architecture import catalog
from explorer.core.errors import ExplorerError, shorten

__all__ = ["RELATIONS", "Lineage", "Node", "dates", "graph", "lineage", "publication_date"]

# Every relation a catalog entry may use: a closed list keeps the legend and the tests honest.
RELATIONS = (
    "distilled from", "distilled from an inverted-bottleneck version of", "same architecture, more data",
    "new objective", "objective taken from", "sparse attention of", "retrieval built on", "multilingual version of",
    "scaled up from", "smaller version of", "parameter sharing of", "new attention of", "component of",
    "early exits on", "sentence embeddings from", "successor of", "open replication of", "control codes on",
    "encoder-decoder version of", "warm-started from", "interleaves local and global attention layers like",
)


def publication_date(variant: catalog.Variant) -> float:
    """Year plus the fraction of the year before the publication month (Oct 2018 -> 2018.75)."""
    return variant.year + (variant.month - 1) / 12


def dates() -> dict[str, float]:
    """Publication date (year + month fraction) of every catalog variant: the x of the overview charts."""
    return {v.key: publication_date(v) for v in catalog.load_catalog().values()}


def graph(variants: dict[str, catalog.Variant] | None = None) -> nx.DiGraph:
    """The lineage graph (parent -> child edges carry ``relation``); bad data raises ExplorerError."""
    variants = catalog.load_catalog() if variants is None else variants
    g = nx.DiGraph()
    for v in variants.values():
        g.add_node(v.key, name=v.name, family=v.family, date=publication_date(v))
    for v in variants.values():
        for parent in v.derived_from:
            key, relation = parent.get("key"), parent.get("relation")
            if key not in variants:
                raise ExplorerError(f"{shorten(v.key)!r} derives from unknown variant {shorten(key)!r}: fix "
                                    "assets/catalog.json.")
            if relation not in RELATIONS:
                raise ExplorerError(f"{shorten(v.key)!r} uses unknown relation {shorten(relation)!r}: use one of "
                                    f"{RELATIONS}.")
            g.add_edge(key, v.key, relation=relation)
    if not nx.is_directed_acyclic_graph(g):
        raise ExplorerError(f"The lineage has a cycle {nx.find_cycle(g)}: fix derived_from in assets/catalog.json.")
    return g


class Node(TypedDict):
    """One variant on the family tree."""

    key: str
    name: str
    family: str
    x: float  # publication date
    y: float  # lane
    parents: list[str]


@dataclass(frozen=True)
class Lineage:
    """Nodes with positions and edges with relations, ready to draw or print."""

    nodes: tuple[Node, ...]
    edges: tuple[dict[str, str], ...]  # parent, child, relation

    def to_dict(self) -> dict[str, object]:
        return {"nodes": list(self.nodes), "edges": list(self.edges)}


def _lanes(g: nx.DiGraph) -> dict[str, float]:
    """A y lane per node: depth-first from the roots so each family sits in a band of its own."""
    order: list[str] = []
    roots = sorted((n for n in g if g.in_degree(n) == 0), key=lambda n: g.nodes[n]["date"])
    def by_date(nodes):
        return sorted(nodes, key=lambda n: g.nodes[n]["date"])

    for root in roots:
        for node in nx.dfs_preorder_nodes(g, root, sort_neighbors=by_date):
            if node not in order:
                order.append(node)
    return {node: float(-i) for i, node in enumerate(order)}


def lineage(variants: dict[str, catalog.Variant] | None = None) -> Lineage:
    """The catalog's family tree: x = publication date, y = a lane per variant (no overlaps)."""
    g = graph(variants)
    lanes = _lanes(g)
    nodes = tuple(
        Node(key=n, name=g.nodes[n]["name"], family=g.nodes[n]["family"], x=g.nodes[n]["date"],
             y=lanes[n], parents=sorted(g.predecessors(n)))
        for n in g
    )
    edges = tuple({"parent": a, "child": b, "relation": d["relation"]} for a, b, d in g.edges(data=True))
    return Lineage(nodes, edges)
