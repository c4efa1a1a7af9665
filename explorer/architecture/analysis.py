"""One call that answers "what is inside this model?": tree, components, memory, FLOPs.

``analyse_variant`` (catalog key + optional overrides) and ``analyse_config`` (a user's
config.json) both return an :class:`Analysis`, which the architecture page draws and
``python -m explorer inspect`` prints. Everything runs on the meta device.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.architecture import build, catalog, cost, layertree
from explorer.architecture.components import breakdown
from explorer.architecture.custom_models import WHOLE_IS_BASE
from explorer.architecture.shapes import trace_shapes
from explorer.architecture.weightbytes import memory_bytes

if TYPE_CHECKING:  # transformers is imported where a config is built, not to type one
    from torch import nn
    from transformers import PretrainedConfig

__all__ = ["Analysis", "base_params", "analyse_model", "analyse_variant", "analyse_config", "base_params_of_variant"]


@dataclass(frozen=True)
class Analysis:
    """Everything the architecture page shows for one model."""

    key: str | None
    name: str
    model_class: str
    head: str
    params: int  # unique parameters of the built model (heads included, tied counted once)
    base_params: int  # unique parameters of the bare encoder/decoder (catalog's "params")
    components: dict[str, int]
    tree: layertree.TreeNode
    memory: dict[str, int]
    flops: cost.Cost
    seq_len: int
    tied: tuple[str, ...]
    shared_blocks: tuple[str, ...]
    config: dict[str, object]
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "key": self.key, "name": self.name, "model_class": self.model_class, "head": self.head,
            "params": self.params, "base_params": self.base_params, "components": self.components,
            "memory_bytes": self.memory, "flops_per_token": self.flops.to_dict(), "seq_len": self.seq_len,
            "tied": list(self.tied), "shared_blocks": list(self.shared_blocks), "notes": list(self.notes),
            "tree": self.tree.to_dict(), "config": self.config,
        }


def base_params(config: PretrainedConfig, head: str, model: nn.Module) -> int:
    """Unique parameters of the bare model (no task heads), the figure papers usually quote.

    Sentence-BERT, ColBERT, the ELECTRA pair and BERT2BERT *are* their whole module (pooling,
    projection and both networks included); other heads are removed by building AutoModel.
    """
    if head == "base" or head in WHOLE_IS_BASE:
        return layertree.unique_params(model)
    return layertree.unique_params(build.instantiate(config, "base"))


def analyse_model(model: nn.Module, config: PretrainedConfig, *, key: str | None, name: str, head: str,
                  seq_len: int = 128, attention: str = "full", shapes: bool = True) -> Analysis:
    """Analyse an already built (meta) model."""
    traced, note = trace_shapes(model, config, seq_len) if shapes else ({}, "")
    tree = layertree.layer_tree(model, config, traced)
    index = layertree.index_parameters(model)
    shared = tuple(f"{n.name} (used {n.uses}x)" for _, n in tree.walk() if n.shared and n.uses > 1)
    params = index.total
    return Analysis(
        key=key, name=name, model_class=type(model).__name__, head=head, params=params,
        base_params=base_params(config, head, model), components=breakdown(model, config),
        tree=tree, memory=memory_bytes(params), flops=cost.per_token(model, config, seq_len, attention),
        seq_len=seq_len, tied=tuple(f"{a} -> {c}" for a, c in index.aliases.items()),
        shared_blocks=_outermost(shared), config=_plain(config), notes=(note,) if note else (),
    )


def _outermost(shared: tuple[str, ...]) -> tuple[str, ...]:
    """Keep only the outermost shared blocks (their insides are shared by implication)."""
    names = [s.split(" ")[0] for s in shared]
    return tuple(s for s, n in zip(shared, names, strict=True)
                 if not any(n != m and n.startswith(m + ".") for m in names))


def _plain(config: PretrainedConfig) -> dict[str, object]:
    data = config.to_diff_dict() if hasattr(config, "to_diff_dict") else dict(config)
    data["model_type"] = config.model_type
    return data


def analyse_variant(key: str, *, seq_len: int = 128, overrides: Mapping[str, int] | None = None,
                    share_layers: bool = False, head: str | None = None, shapes: bool = True) -> Analysis:
    """Analyse a catalog variant (optionally resized with generic overrides)."""
    variant = catalog.get_variant(key)
    config = build.make_config(key, overrides)
    model = build.instantiate(config, head or variant.head, "meta", variant.extra)
    if share_layers:
        model = build.share_all_layers(model)
    return analyse_model(model, config, key=key, name=variant.name, head=head or variant.head,
                         seq_len=seq_len, attention=variant.attention, shapes=shapes)


def analyse_config(config: PretrainedConfig, *, name: str = "custom", seq_len: int = 128, head: str | None = None,
                   share_layers: bool = False, shapes: bool = True) -> Analysis:
    """Analyse a user's configuration (e.g. an uploaded config.json)."""
    head = head or build.default_head(config)
    model = build.instantiate(config, head)
    if share_layers:
        model = build.share_all_layers(model)
    attention = "causal" if head == "causal-lm" else "full"
    return analyse_model(model, config, key=None, name=name, head=head, seq_len=seq_len,
                         attention=attention, shapes=shapes)


def base_params_of_variant(key: str) -> int:
    """The catalog's "params" column: :func:`base_params` of a variant, without a tree."""
    variant = catalog.get_variant(key)
    config = build.make_config(key)
    head = variant.head if variant.head in WHOLE_IS_BASE else "base"
    return layertree.unique_params(build.instantiate(config, head, "meta", variant.extra))

