"""The layer tree as a torchinfo-style text table (``python -m explorer inspect`` and the architecture page).

Tied weights are counted once and repeated siblings collapsed, as in
:func:`explorer.architecture.layertree.layer_tree`.
"""

from __future__ import annotations

from explorer.architecture.layertree import TreeNode

__all__ = ["text_tree"]


def text_tree(root: TreeNode, max_depth: int = 4) -> str:
    """A torchinfo-style text table (tied weights counted once; repeats collapsed)."""
    rows = [("Layer (type)", "Output Shape", "Param #")]
    for depth, node in root.walk():
        if depth > max_depth:
            continue
        name = f"{'│    ' * max(0, depth - 1)}{'├─' if depth else ''}{_label(node)}"
        shape = str(list(node.shape)) if node.shape else "--"
        rows.append((name, shape, f"{node.params:,}" if node.params else "--"))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    line = "=" * (sum(widths) + 6)
    out = [line, _fmt(rows[0], widths), line]
    out += [_fmt(r, widths) for r in rows[1:]]
    out += [line, f"Total params (unique, tied counted once): {root.params:,}", line]
    return "\n".join(out)


def _label(node: TreeNode) -> str:
    text = f"{node.type}: {node.label}" if node.label != node.type else node.type
    if node.repeat > 1:
        text = f"{node.repeat} x {text}"
    if node.shared and node.uses > 1:
        text += f" (shared, used {node.uses}x)"
    if node.tied:
        text += " (tied)"
    return text


def _fmt(row: tuple[str, str, str], widths: list[int]) -> str:
    return f"{row[0]:<{widths[0]}}   {row[1]:<{widths[1]}}   {row[2]:>{widths[2]}}"
