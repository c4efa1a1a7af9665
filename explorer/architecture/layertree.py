"""The layer tree of a model: every module once, identical siblings collapsed, unique parameters counted.

Counting rules (they differ from torchinfo 1.8, which counts tied weights twice):

- every parameter is counted once, under its *canonical* (first) name; aliases such as a
  tied LM head (``cls.predictions.decoder.weight`` = the word embeddings) are listed as tied;
- a module object that appears several times (our "share layers" option) is counted once and
  shown as one block used N times; ALBERT's single layer group, which transformers calls N
  times without any alias, is shown the same way from its config.

The per-category totals are :func:`explorer.architecture.components.breakdown`, the output shapes
:mod:`explorer.architecture.shapes`, the text table :mod:`explorer.architecture.treetable`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from torch import nn

if TYPE_CHECKING:  # transformers is imported where a config is built, not to type one
    from transformers import PretrainedConfig

__all__ = [
    "TreeNode", "ParamIndex", "index_parameters", "albert_uses", "reference_uses", "module_uses", "layer_tree",
    "unique_params",
]


@dataclass(frozen=True)
class TreeNode:
    """One module (or a run of identical sibling modules collapsed into one node)."""

    name: str  # dotted path of the (first) module
    label: str  # attribute name, e.g. "layer" or "0-11"
    type: str
    params: int  # unique parameters in this subtree (shared/tied counted once, here or earlier)
    repeat: int = 1  # identical siblings collapsed into this node
    uses: int = 1  # how many times one forward pass runs this module (shared layers > 1)
    shared: bool = False  # one set of weights reused (ALBERT, shared layers)
    tied: tuple[str, ...] = ()  # "param -> canonical param" for weights tied to another module
    shape: tuple[int, ...] | None = None  # output shape for the analysed sequence length
    children: tuple[TreeNode, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name, "label": self.label, "type": self.type, "params": self.params,
            "repeat": self.repeat, "uses": self.uses, "shared": self.shared, "tied": list(self.tied),
            "shape": list(self.shape) if self.shape else None,
            "children": [c.to_dict() for c in self.children],
        }

    def walk(self, depth: int = 0) -> Iterator[tuple[int, TreeNode]]:
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)


@dataclass(frozen=True)
class ParamIndex:
    """Canonical parameters (name -> numel) and aliases (alias name -> canonical name)."""

    numel: dict[str, int]
    aliases: dict[str, str]
    owners: dict[str, str] = field(default_factory=dict)  # canonical param -> owning module type

    @property
    def total(self) -> int:
        return sum(self.numel.values())


def index_parameters(model: nn.Module) -> ParamIndex:
    """Walk every parameter once, remembering the first name of each tensor."""
    first: dict[int, str] = {}
    numel: dict[str, int] = {}
    aliases: dict[str, str] = {}
    owners: dict[str, str] = {}
    types = {
        n: "Embedding" if isinstance(m, nn.Embedding) else type(m).__name__
        for n, m in model.named_modules(remove_duplicate=False)
    }
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) in first:
            if first[id(p)] != name:
                aliases[name] = first[id(p)]
            continue
        first[id(p)] = name
        numel[name] = p.numel()
        owners[name] = types.get(name.rpartition(".")[0], "")
    return ParamIndex(numel, aliases, owners)


def _subtree_sums(index: ParamIndex) -> dict[str, int]:
    """Unique params under every module path ('' = the root)."""
    sums: dict[str, int] = defaultdict(int)
    for name, n in index.numel.items():
        parts = name.split(".")[:-1]
        for i in range(len(parts) + 1):
            sums[".".join(parts[:i])] += n
    return sums


def _signature(module: nn.Module) -> tuple:
    """Structure of a module: its type and every parameter's shape, for collapsing repeats."""
    return (type(module).__name__,) + tuple(
        (n, tuple(p.shape)) for n, p in module.named_parameters(remove_duplicate=False)
    )


@dataclass
class _Walk:
    """State shared while building the tree."""

    index: ParamIndex
    sums: dict[str, int]
    shapes: dict[str, tuple[int, ...]]
    uses: dict[int, int]  # id(module) -> forward uses
    seen: dict[int, str] = field(default_factory=dict)  # id(module) -> first path


def _node(walk: _Walk, path: str, label: str, module: nn.Module) -> TreeNode:
    shared_ref = id(module) in walk.seen
    walk.seen.setdefault(id(module), path)
    prefix = f"{path}." if path else ""
    tied = tuple(
        f"{prefix}{p} -> {walk.index.aliases[prefix + p]}"
        for p in module._parameters if prefix + p in walk.index.aliases
    )
    children = () if shared_ref else tuple(_children(walk, path, module))
    uses = walk.uses.get(id(module), 1)
    return TreeNode(
        name=walk.seen[id(module)], label=label, type=type(module).__name__,
        params=0 if shared_ref else walk.sums.get(path, 0), uses=uses,
        shared=shared_ref or uses > 1, tied=tied, shape=walk.shapes.get(path), children=children,
    )


def _children(walk: _Walk, path: str, module: nn.Module) -> Iterator[TreeNode]:
    """Child nodes, with runs of identical siblings (same structure) collapsed into one."""
    items = [(k, m) for k, m in module._modules.items() if m is not None]
    i = 0
    while i < len(items):
        j = i + 1
        sig = _signature(items[i][1])
        while j < len(items) and items[j][0].isdigit() and _signature(items[j][1]) == sig:
            j += 1
        run = items[i:j]
        child_path = f"{path}.{run[0][0]}" if path else run[0][0]
        first = _node(walk, child_path, run[0][0], run[0][1])
        if len(run) > 1:
            total = first.params + sum(_count_sibling(walk, path, k, m) for k, m in run[1:])
            same = all(m is run[0][1] for _, m in run)
            first = _collapse(first, run, total, same)
        yield first
        i = j


def _count_sibling(walk: _Walk, path: str, key: str, module: nn.Module) -> int:
    """Params of a collapsed sibling (0 if it is the same object seen before)."""
    if id(module) in walk.seen:
        return 0
    child_path = f"{path}.{key}" if path else key
    for sub_name, sub in module.named_modules(prefix=child_path):
        walk.seen.setdefault(id(sub), sub_name)
    return walk.sums.get(child_path, 0)


def _collapse(first: TreeNode, run: list[tuple[str, nn.Module]], total: int, same: bool) -> TreeNode:
    label = f"{run[0][0]}-{run[-1][0]}"
    uses = len(run) if same else first.uses
    return replace(first, label=label, params=total, repeat=len(run), uses=uses, shared=same or first.shared)


def albert_uses(model: nn.Module, config: PretrainedConfig | None) -> dict[int, int]:
    """ALBERT runs each layer group num_hidden_layers / num_hidden_groups times."""
    uses: dict[int, int] = {}
    if config is None or getattr(config, "model_type", "") != "albert":
        return uses
    per_group = config.num_hidden_layers // max(1, config.num_hidden_groups)
    for name, module in model.named_modules():
        if name.endswith("albert_layer_groups"):
            for group in module:
                for sub in group.modules():
                    uses[id(sub)] = per_group
    return uses


def reference_uses(model: nn.Module) -> dict[int, int]:
    """How many times each module object is referenced (a shared block used N times)."""
    counts: dict[int, int] = defaultdict(int)

    def visit(m: nn.Module) -> None:
        counts[id(m)] += 1
        if counts[id(m)] == 1:
            for child in m._modules.values():
                if child is not None:
                    visit(child)

    visit(model)
    return dict(counts)


def module_uses(model: nn.Module, config: PretrainedConfig | None) -> dict[int, int]:
    """Forward uses per module: references (shared layers) and ALBERT's config-driven reuse."""
    uses = reference_uses(model)
    for mid, n in albert_uses(model, config).items():
        uses[mid] = max(uses.get(mid, 1), n)
    for _, parent in model.named_modules():  # a shared block's insides run as often as it does
        for child in parent.children():
            if uses.get(id(parent), 1) > 1 and uses.get(id(child), 1) < uses[id(parent)]:
                uses[id(child)] = uses[id(parent)]
    return uses


def layer_tree(model: nn.Module, config: PretrainedConfig | None = None,
               shapes: dict[str, tuple[int, ...]] | None = None) -> TreeNode:
    """The collapsed layer tree of ``model``; the root's params equal the unique total.

    >>> from explorer.architecture import build
    >>> config = build.config_from_dict({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2,
    ...     "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})
    >>> tree = layer_tree(build.instantiate(config, "base"), config)
    >>> tree.type, tree.params, [child.label for child in tree.children]
    ('BertModel', 110528, ['embeddings', 'encoder', 'pooler'])
    """
    index = index_parameters(model)
    walk = _Walk(index, _subtree_sums(index), shapes or {}, module_uses(model, config))
    return _node(walk, "", type(model).__name__, model)


def unique_params(model: nn.Module) -> int:
    """Parameters counted once each (``parameters()`` drops tied aliases)."""
    return sum(p.numel() for p in model.parameters())
