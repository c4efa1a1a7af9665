"""Figures for the architecture explorer and the comparator (pure: results in, figures out)."""

from __future__ import annotations

import html
import math

import networkx as nx
import plotly.graph_objects as go

from explorer.architecture.compare import Comparison
from explorer.architecture.layertree import TreeNode
from explorer.core.units import human

__all__ = ["HEAD_COLOUR", "PALETTE", "colour", "components_figure", "module_graph", "node_label",
    "params_log", "scaling", "stacked_components", "tree_figure", "tree_html"]

PALETTE = {  # one colour per component category, stable across figures
    "token embeddings": "#4C78A8", "position embeddings": "#72B7B2", "token-type embeddings": "#9ECAE9",
    "embedding projection": "#54A24B", "attention Q/K/V/O": "#F58518", "relative position": "#FFBF79",
    "feed-forward": "#E45756", "layer norms": "#BAB0AC", "pooler": "#B279A2", "cross-attention": "#EECA3B",
}
HEAD_COLOUR = "#9D755D"


def colour(category: str) -> str:
    return PALETTE.get(category, HEAD_COLOUR if category.startswith("head:") else "#D3D3D3")


def node_label(node: TreeNode) -> str:
    text = node.type if node.repeat == 1 else f"{node.repeat} x {node.type}"
    if node.shared and node.uses > 1:
        text += f" (shared, used {node.uses}x)"
    return text


def _tree_rows(root: TreeNode, max_depth: int) -> tuple[list[str], list[str], list[str], list[int]]:
    ids, parents, labels, values = [], [], [], []
    stack: list[tuple[TreeNode, str, int]] = [(root, "", 0)]
    while stack:
        node, parent, depth = stack.pop()
        if node.params == 0 or depth > max_depth:
            continue
        node_id = f"{parent}/{node.label}" if parent else node.label
        ids.append(node_id)
        parents.append(parent)
        labels.append(f"{node.label}: {node_label(node)}" if depth else node_label(node))
        values.append(node.params)
        stack.extend((c, node_id, depth + 1) for c in reversed(node.children))
    return ids, parents, labels, values


def tree_figure(root: TreeNode, kind: str = "treemap", max_depth: int = 6) -> go.Figure:
    """Treemap or sunburst of unique parameters (area = parameters, tied counted once)."""
    ids, parents, labels, values = _tree_rows(root, max_depth)
    trace_cls = go.Treemap if kind == "treemap" else go.Sunburst
    trace = trace_cls(ids=ids, parents=parents, labels=labels, values=values, branchvalues="total",
                      hovertemplate="%{label}<br>%{value:,} parameters<extra></extra>", maxdepth=3)
    fig = go.Figure(trace)
    fig.update_layout(margin=dict(t=30, l=0, r=0, b=0), title=f"{root.type}: {human(root.params)} parameters")
    return fig


def components_figure(components: dict[str, int], title: str = "") -> go.Figure:
    """Horizontal bars: parameters per component category."""
    items = sorted(components.items(), key=lambda kv: kv[1])
    total = sum(components.values()) or 1
    fig = go.Figure(go.Bar(
        x=[v for _, v in items], y=[k for k, _ in items], orientation="h",
        marker_color=[colour(k) for k, _ in items],
        text=[f"{human(v)} ({100 * v / total:.1f}%)" for _, v in items], textposition="auto",
        hovertemplate="%{y}: %{x:,}<extra></extra>",
    ))
    fig.update_layout(title=title or "Parameters by component", xaxis_title="parameters",
                      margin=dict(l=10, r=10, t=40, b=10), height=max(260, 28 * len(items) + 80))
    return fig


def module_graph(root: TreeNode, max_depth: int = 3) -> go.Figure:
    """The module hierarchy as a layered graph (networkx layout), node size ~ log(parameters)."""
    graph = nx.DiGraph()
    for node_id, parent, label, value in zip(*_tree_rows(root, max_depth), strict=True):
        graph.add_node(node_id, label=label, value=value, depth=node_id.count("/"))
        if parent:
            graph.add_edge(parent, node_id)
    pos = nx.multipartite_layout(graph, subset_key="depth", align="horizontal", scale=1.0)
    ex, ey = [], []
    for a, b in graph.edges:
        ex += [pos[a][0], pos[b][0], None]
        ey += [-pos[a][1], -pos[b][1], None]
    nodes = list(graph.nodes)
    fig = go.Figure([
        go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#bbb", width=1), hoverinfo="skip"),
        go.Scatter(
            x=[pos[n][0] for n in nodes], y=[-pos[n][1] for n in nodes], mode="markers",
            marker=dict(size=[6 + 3 * math.log10(1 + graph.nodes[n]["value"]) for n in nodes], color="#4C78A8"),
            text=[f"{graph.nodes[n]['label']}<br>{graph.nodes[n]['value']:,} params" for n in nodes],
            hovertemplate="%{text}<extra></extra>",
        ),
    ])
    fig.update_layout(showlegend=False, xaxis_visible=False, yaxis_visible=False,
                      margin=dict(l=0, r=0, t=30, b=0), title="Module graph (hover for names)")
    return fig


def tree_html(root: TreeNode, open_depth: int = 1, max_depth: int = 8) -> str:
    """A collapsible <details> tree; every text is escaped (names come from user configs)."""
    def render(node: TreeNode, depth: int) -> str:
        shape = f" → {list(node.shape)}" if node.shape else ""
        tied = " · <i>tied</i>" if node.tied else ""
        name = "" if depth == 0 else f"<b>{html.escape(node.label)}</b> "
        head = (f"{name}{html.escape(node_label(node))}"
                f" <code>{node.params:,}</code>{html.escape(shape)}{tied}")
        kids = [c for c in node.children if c.params or c.tied or c.children] if depth < max_depth else []
        if not kids:
            return f"<div style='margin-left:1.2em'>• {head}</div>"
        inner = "".join(render(c, depth + 1) for c in kids)
        opened = " open" if depth < open_depth else ""
        return f"<details{opened} style='margin-left:0.6em'><summary>{head}</summary>{inner}</details>"

    return f"<div style='font-size:0.9em;line-height:1.5'>{render(root, 0)}</div>"


def stacked_components(comp: Comparison, share: bool = False) -> go.Figure:
    """One stacked bar per model: parameters by component (or each component's share in %)."""
    categories: list[str] = []
    for parts in comp.components.values():
        categories += [c for c in parts if c not in categories]
    names = list(comp.components)
    totals = {n: sum(comp.components[n].values()) or 1 for n in names}

    def value(n: str, c: str) -> float:
        v = comp.components[n].get(c, 0)
        return 100 * v / totals[n] if share else v

    fig = go.Figure([
        go.Bar(name=c, x=names, y=[value(n, c) for n in names], marker_color=colour(c)) for c in categories
    ])
    fig.update_layout(barmode="stack", title="Parameters by component" + (" (% of each model)" if share else ""),
                      yaxis_title="% of parameters" if share else "parameters", legend=dict(orientation="h", y=-0.25))
    return fig


def params_log(comp: Comparison) -> go.Figure:
    """Parameters per model on a log axis (BERT-base to GPT-3 on one chart)."""
    rows = sorted(comp.rows, key=lambda r: r["params"])
    fig = go.Figure(go.Bar(x=[r["name"] for r in rows], y=[r["params"] for r in rows],
                           text=[human(r["params"]) for r in rows], textposition="outside",
                           marker_color="#4C78A8"))
    fig.update_layout(yaxis_type="log", title="Parameters (log scale)", yaxis_title="parameters")
    return fig


def scaling(comp: Comparison, metric: str = "flops") -> go.Figure:
    """FLOPs per token or attention-score memory against sequence length (log-log)."""
    series = comp.flops if metric == "flops" else comp.attention_memory
    fig = go.Figure([go.Scatter(x=list(comp.lengths), y=list(v), mode="lines+markers", name=k)
                     for k, v in series.items()])
    title = "Forward FLOPs per token" if metric == "flops" else "Attention-score memory per sequence (fp32)"
    fig.update_layout(title=title, xaxis_type="log", yaxis_type="log", xaxis_title="sequence length",
                      yaxis_title="FLOPs" if metric == "flops" else "bytes")
    return fig
