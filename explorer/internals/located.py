"""A loaded model matched to its anatomy card: where its base model is, which head reads it out, and whether every
module the card names is there with the sizes its config states.

The card's paths are relative to the base model; a head class (``BertForMaskedLM``) holds it under its
``base_model_prefix`` ("bert."), a bare base model (MiniLM saved as a ``BertModel``) at the root. A model of a known
type whose modules do not match its card (an edited checkpoint, a class the card does not describe) is refused in
words by :func:`locate`; :func:`mismatches` checks every layer (the catalog test runs it on all 45 variants).

>>> import transformers
>>> cfg = transformers.GPT2Config(vocab_size=50, n_embd=16, n_layer=2, n_head=2, n_positions=32)
>>> found = locate(transformers.GPT2LMHeadModel(cfg))
>>> found.prefix, found.path(found.card.main.block.attention.out, 1), found.head, mismatches(found.model, found)
('transformer.', 'transformer.h.1.attn.c_proj', 'linear', [])
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from explorer.architecture import anatomy
from explorer.architecture.anatomy import Card, Resolved, StackShape
from explorer.architecture.anatomy.card import Attention, Stack
from explorer.core.errors import ExplorerError

__all__ = ["Located", "has", "io_widths", "locate", "mismatches", "module"]


def module(model: nn.Module, path: str) -> nn.Module:
    """The submodule at a dotted path ("" is the model itself)."""
    return model.get_submodule(path) if path else model


def has(model: nn.Module, path: str) -> bool:
    try:
        module(model, path)
    except AttributeError:
        return False
    return True


def io_widths(layer: nn.Module) -> tuple[int, int] | None:
    """(input, output) width of a Linear or GPT-2's Conv1D (weight stored (in, out)); None for anything else."""
    if isinstance(layer, nn.Linear):
        return layer.in_features, layer.out_features
    weight = getattr(layer, "weight", None)
    if type(layer).__name__ == "Conv1D" and weight is not None and weight.dim() == 2:
        return int(weight.shape[0]), int(weight.shape[1])
    return None


@dataclass(frozen=True)
class Located:
    """One model and its card: paths resolved through ``prefix``, numbers from its config."""

    model: nn.Module
    card: Card
    numbers: Resolved
    prefix: str  # the base model's path inside the head class, with a trailing dot ("" at the root)
    head: str | None  # how logits are read (None: no language-model head)
    head_path: str
    stacks: tuple[str, ...]  # the card's stacks this model has (a decoder-only wrapper has no encoder)

    def path(self, template: str, i: int = 0) -> str:
        """A card path for layer ``i``, from the model's root."""
        return self.prefix + template.format(i=i)

    def template(self, template: str) -> str:
        """A card path from the model's root, ``{i}`` kept."""
        return self.prefix + template

    def at(self, template: str, i: int = 0) -> nn.Module:
        return module(self.model, self.path(template, i))

    def shape(self, stack: str) -> StackShape:
        return self.numbers.stack(stack)


def _prefix(model: nn.Module, card: Card) -> str:
    """Where a head class keeps the base model ("bert."); "" for the base model itself."""
    return f"{card.prefix}." if card.prefix and isinstance(getattr(model, card.prefix, None), nn.Module) else ""


def _head(model: nn.Module, card: Card) -> tuple[str | None, str]:
    """(how logits are read, the head's path) of the first head the card names that the model has."""
    for path, how in card.readout.heads:
        if has(model, path):
            if how == "linear" and not isinstance(module(model, path), nn.Linear):
                how = "module"
            return how, "" if how in ("electra", "distilbert") else path
    return None, ""


def _present(model: nn.Module, card: Card, prefix: str) -> tuple[str, ...]:
    return tuple(s.name for s in card.stacks if has(model, prefix + s.block.path.format(i=0)))


def locate(model: nn.Module, card: Card | None = None) -> Located:
    """``model`` matched to its card (or ``card``): an ExplorerError when its type has none, or when the card's
    main stack is not where its layer 0 should be."""
    config = getattr(model, "config", None)
    if config is None:
        raise ExplorerError("This is not a transformers model (it has no config): its hook points are unknown.")
    own = anatomy.card_of(config) if card is None else None
    card = card or own
    assert card is not None
    prefix = _prefix(model, card)
    found = Located(model, card, anatomy.resolved(config, card), prefix, *_head(model, card),
                    _present(model, card, prefix))
    problems = _stack_problems(found, card.main, layers=(0,))
    if problems:
        whose = "its" if own is not None else f"the {card.label}"
        raise ExplorerError(f"This {getattr(config, 'model_type', '?')} model's modules do not match {whose} "
                            f"anatomy card ({'; '.join(problems[:3])}): it is not a {card.label} as transformers "
                            "builds one. Load it with its own transformers class, or pick a catalog variant.")
    return found


def mismatches(model: nn.Module, found: Located) -> list[str]:
    """Everything the card names that the model lacks or sizes differently, over every layer of every stack."""
    problems = []
    for stack in found.card.stacks:
        if stack.name in found.stacks or stack is found.card.main:
            problems += _stack_problems(found, stack, range(found.shape(stack.name).layers))
    return problems


def _stack_problems(found: Located, stack: Stack, layers: range | tuple[int, ...]) -> list[str]:
    shape = found.shape(stack.name)
    problems = _count_problems(found, stack, shape)
    for i in layers:
        problems += _layer_problems(found, stack, shape, i)
    for path in (stack.final_norm, stack.embeddings.token, stack.embeddings.positions, stack.embeddings.norm,
                 stack.embeddings.token_types, stack.embeddings.projection, stack.positions.module):
        if path and not has(found.model, found.path(path)) and path not in found.card.optional:
            problems.append(f"no {found.path(path)}")
    return problems


def _count_problems(found: Located, stack: Stack, shape: StackShape) -> list[str]:
    """Blocks: as many as the config's layers; a shared block: the only module of every list above it."""
    template = stack.block.path
    if "{i}" not in template:
        lists = [found.prefix + template.rsplit(".", n)[0] for n in (1, 3)]
        sizes = {p: len(m) for p in lists if has(found.model, p) and isinstance(m := module(found.model, p),
                                                                                 nn.ModuleList)}
        return [f"{p} holds {n} modules, not one shared layer" for p, n in sizes.items() if n != 1]
    if shape.layers < 1:
        return ["the config names no layer count"]
    last, beyond = found.path(template, shape.layers - 1), found.path(template, shape.layers)
    if not has(found.model, last) or has(found.model, beyond):
        return [f"the config says {shape.layers} layers but {found.template(template)} does not hold that many"]
    return []


def _layer_problems(found: Located, stack: Stack, shape: StackShape, i: int) -> list[str]:
    block, model = stack.block, found.model
    mlp_kind = found.numbers.mlp_kind
    paths = [block.path, block.attn, block.mlp, block.neurons, *block.norms, *block.cross_norms]
    problems = [f"no {found.path(p, i)}" for p in paths if not has(model, found.path(p, i))]
    problems += _attention_problems(found, block.attention, shape, i)
    if block.cross is not None:
        problems += _attention_problems(found, block.cross, shape, i)
    ups = block.mlp_gated if mlp_kind == "gated" and block.mlp_gated else (block.mlp_up, block.mlp_gate)
    for path in (p for p in (*ups, block.neurons) if p):
        problems += _width_problem(found, path, i, shape.d_ff, into=path == block.neurons)
    return problems


def _attention_problems(found: Located, attention: Attention, shape: StackShape, i: int) -> list[str]:
    width = shape.head_width
    wanted = [(attention.q, shape.heads * width), (attention.k, shape.kv_heads * width),
              (attention.v, shape.kv_heads * width), (attention.qkv, (shape.heads + 2 * shape.kv_heads) * width)]
    problems = [p for path, n in wanted if path for p in _width_problem(found, path, i, n, into=False)]
    problems += _width_problem(found, attention.out, i, shape.heads * width, into=True)
    for norm in (attention.q_norm, attention.k_norm):
        if norm and not has(found.model, found.path(norm, i)):
            problems.append(f"no {found.path(norm, i)}")
    return problems


def _width_problem(found: Located, template: str, i: int, expected: int | None, into: bool) -> list[str]:
    """A projection that is missing, or whose input (``into``) or output width is not ``expected``."""
    path = found.path(template, i)
    if not has(found.model, path):
        return [] if template in found.card.optional else [f"no {path}"]
    widths = io_widths(module(found.model, path))
    if widths is None or expected is None:
        return []
    got = widths[0] if into else widths[1]
    return [] if got == expected else [f"{path} is {got} wide where the config gives {expected}"]
