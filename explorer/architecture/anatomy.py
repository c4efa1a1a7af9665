"""Anatomy of a model: layer tree, parameter breakdown by component, memory and FLOPs.

Counting rules (they differ from torchinfo 1.8, which counts tied weights twice):

- every parameter is counted once, under its *canonical* (first) name; aliases such as a
  tied LM head (``cls.predictions.decoder.weight`` = the word embeddings) are listed as tied;
- a module object that appears several times (our "share layers" option) is counted once and
  shown as one block used N times; ALBERT's single layer group, which transformers calls N
  times without any alias, is shown the same way from its config;
- the component categories partition the canonical parameters, so they sum to the total.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torch import nn

from explorer.architecture import components
from explorer.architecture.modeltypes import is_encoder_decoder

if TYPE_CHECKING:  # transformers is imported where a config is built, not to type one
    from transformers import PretrainedConfig

__all__ = [
    "BYTES", "ADAM_BYTES", "TreeNode", "ParamIndex", "index_parameters", "albert_uses", "reference_uses",
    "module_uses", "layer_tree", "breakdown", "memory_bytes", "dummy_inputs", "unique_params", "trace_shapes",
    "text_tree",
]


BYTES = {"fp32": 4, "fp16": 2, "int8": 1}
ADAM_BYTES = 16  # fp32 weights + gradients + two Adam moments, per parameter


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

    def to_dict(self) -> dict[str, Any]:
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
    from dataclasses import replace

    label = f"{run[0][0]}-{run[-1][0]}"
    uses = len(run) if same else first.uses
    return replace(first, label=label, params=total, repeat=len(run), uses=uses, shared=same or first.shared)


def albert_uses(model: nn.Module, config: PretrainedConfig) -> dict[int, int]:
    """ALBERT runs each layer group num_hidden_layers / num_hidden_groups times."""
    uses: dict[int, int] = {}
    if getattr(config, "model_type", "") != "albert":
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


def module_uses(model: nn.Module, config: PretrainedConfig) -> dict[int, int]:
    """Forward uses per module: references (shared layers) and ALBERT's config-driven reuse."""
    uses = reference_uses(model)
    for mid, n in albert_uses(model, config).items():
        uses[mid] = max(uses.get(mid, 1), n)
    for _, parent in model.named_modules():  # a shared block's insides run as often as it does
        for child in parent.children():
            if uses.get(id(parent), 1) > 1 and uses.get(id(child), 1) < uses[id(parent)]:
                uses[id(child)] = uses[id(parent)]
    return uses


def layer_tree(model: nn.Module, config: PretrainedConfig | None = None, shapes: dict[str, tuple[int, ...]] | None = None) -> TreeNode:
    """The collapsed layer tree of ``model``; the root's params equal the unique total.

    >>> from explorer import build
    >>> config = build.config_from_dict({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2,
    ...     "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})
    >>> tree = layer_tree(build.instantiate(config, "base"), config)
    >>> tree.type, tree.params, [child.label for child in tree.children]
    ('BertModel', 110528, ['embeddings', 'encoder', 'pooler'])
    """
    index = index_parameters(model)
    walk = _Walk(index, _subtree_sums(index), shapes or {}, module_uses(model, config))
    return _node(walk, "", type(model).__name__, model)


def breakdown(model: nn.Module, config: PretrainedConfig | None = None) -> dict[str, int]:
    """Unique parameters per component category; the values sum exactly to the total."""
    index = index_parameters(model)
    decoderish = bool(config is not None and (
        is_encoder_decoder(config) or getattr(config, "is_decoder", False)
        or type(model).__name__.endswith(("ForCausalLM", "LMHeadModel"))
    ))
    totals: dict[str, int] = {c: 0 for c in components.ORDER}
    for name, n in index.numel.items():
        totals[components.categorize(name, index.owners.get(name, ""), decoderish)] += n
    return {c: v for c, v in totals.items() if v}


def memory_bytes(params: int) -> dict[str, int]:
    """Weight memory per precision, plus fp32 training with Adam (weights+grads+2 moments)."""
    out = {p: params * b for p, b in BYTES.items()}
    out["train_fp32_adam"] = params * ADAM_BYTES
    return out


def _first_tensor(out: Any):
    """The first tensor in a module output (tensor, tuple or ModelOutput)."""
    import torch

    if isinstance(out, torch.Tensor):
        return out
    values = out.values() if isinstance(out, dict) else out if isinstance(out, (tuple, list)) else ()
    for v in values:
        t = _first_tensor(v)
        if t is not None:
            return t
    return None


def dummy_inputs(model: nn.Module, config: PretrainedConfig, seq_len: int) -> dict[str, Any]:
    """Meta-device inputs for one sequence of ``seq_len`` tokens (decoder inputs when needed)."""
    import torch

    ids = torch.zeros(1, seq_len, dtype=torch.long, device="meta")
    inputs: dict[str, Any] = {"input_ids": ids}
    config = getattr(model, "config", config)  # BERT2BERT is built from a BERT config
    if config is not None and is_encoder_decoder(config):
        inputs["decoder_input_ids"] = ids
    return inputs


@contextlib.contextmanager
def _neutral_item(seq_len: int) -> Iterator[None]:
    """Meta tensors hold no values, so ``.item()`` and ``bool()`` raise. Models call them only
    for sanity checks, mask shortcuts and lengths (``lengths.max().item()``); answer those with
    True / seq_len / 0.0 while tracing shapes, and restore the real methods afterwards.

    The patch is process-wide (every thread sees it), so it is held under ``build.BUILD_LOCK``:
    no model is built or loaded elsewhere while ``.item()`` answers neutrally on meta tensors.
    Real (non-meta) tensors keep their real answers throughout."""
    import torch

    from explorer.architecture.build import BUILD_LOCK

    real = torch.Tensor.item

    def item(self):
        if self.device.type != "meta":
            return real(self)
        if self.dtype == torch.bool:
            return True
        return 0.0 if self.is_floating_point() else seq_len

    real_bool = torch.Tensor.__bool__

    def as_bool(self):
        return True if self.device.type == "meta" else real_bool(self)

    from torch.fx.experimental import _config as fx_config

    with BUILD_LOCK:
        torch.Tensor.item, torch.Tensor.__bool__ = item, as_bool
        try:
            # Longformer finds its global tokens with nonzero(); on meta, assume every entry is set
            with fx_config.patch(meta_nonzero_assume_all_nonzero=True):
                yield
        finally:
            torch.Tensor.item, torch.Tensor.__bool__ = real, real_bool


def unique_params(model: nn.Module) -> int:
    """Parameters counted once each (``parameters()`` drops tied aliases)."""
    return sum(p.numel() for p in model.parameters())


def trace_shapes(model: nn.Module, config: PretrainedConfig, seq_len: int) -> tuple[dict[str, tuple[int, ...]], str]:
    """Output shape of every module for one sequence, from a forward pass on the meta device.

    Returns (shapes by module path, note). Some architectures cannot run on meta tensors
    (data-dependent control flow); then shapes are empty and the note says why.
    """
    import torch

    shapes: dict[str, tuple[int, ...]] = {}
    hooks = []
    for name, module in model.named_modules():
        def hook(_m, _inp, out, name=name):
            t = _first_tensor(out)
            if t is not None and name not in shapes:
                shapes[name] = tuple(t.shape)
        hooks.append(module.register_forward_hook(hook))
    try:
        with torch.no_grad(), _neutral_item(seq_len):
            model(**dummy_inputs(model, config, seq_len))
        note = ""
    except (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError, AttributeError) as err:
        # shapes are a bonus: data-dependent control flow on meta tensors must not fail the analysis
        note = f"Output shapes unavailable for this architecture on the meta device ({type(err).__name__})."
        shapes.clear()
    finally:
        for h in hooks:
            h.remove()
    return shapes, note


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
