"""Hook points named once per architecture: where a model's residual stream, sublayers, heads and neurons live.

The lens, attribution and interventions all ask the same questions of a loaded model: which modules are its
blocks, what enters the first one, which module adds the attention (or MLP) sublayer's output to the stream,
where the heads are concatenated, where the MLP's neurons are, and how a block's output becomes logits through the
model's own final norm and output head. :func:`of` answers them from the model type's anatomy card
(:mod:`explorer.architecture.anatomy`: one name per hook point, the TransformerLens idea) matched to the model's
module tree (:mod:`explorer.internals.located`), so a downloaded or lab-trained checkpoint of any catalog family
gets the same answers as the bundled ones, and one whose modules do not match its card is refused in words.

For an encoder-decoder the sites are the decoder's: its layers are where the next token is formed
(:func:`stack_of` gives the encoder's).

>>> import torch, transformers
>>> cfg = transformers.GPT2Config(vocab_size=50, n_embd=16, n_layer=2, n_head=2, n_positions=32)
>>> s = of(transformers.GPT2LMHeadModel(cfg))
>>> s.family, s.layers, s.heads, s.head_width, s.block(1), s.heads_in(0), s.neurons_in(1)
('decoder', 2, 2, 8, 'transformer.h.1', 'transformer.h.0.attn.c_proj', 'transformer.h.1.mlp.c_proj')
>>> s.final_norm, s.has_head
('transformer.ln_f', True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import torch
from torch import nn

from explorer.architecture.anatomy.card import Stack
from explorer.core.errors import ExplorerError
from explorer.internals import located
from explorer.internals.located import Located, module

__all__ = ["Sites", "first", "module", "of", "stack_of"]


def first(output: object) -> torch.Tensor:
    """A module's output tensor: the first element of a tuple or a model output."""
    while not isinstance(output, torch.Tensor):
        if isinstance(output, tuple | list) and output:
            output = output[0]
        elif isinstance(output, Mapping) and output:
            output = next(iter(output.values()))
        else:
            raise ExplorerError(f"A block returned {type(output).__name__}, not a tensor: this architecture's "
                                "hook points are not known. Pick a model of another family.")
    return output


@dataclass(frozen=True)
class Sites:
    """Where one model's hook points are (module paths; ``{i}`` in a template is the layer)."""

    model_type: str
    family: str  # "encoder", "decoder", "encoder-decoder"
    layers: int  # blocks the stream passes through (the decoder's, for an encoder-decoder)
    heads: int
    head_width: int
    d_model: int
    d_ff: int | None
    entry: str  # the module whose INPUT is the stream entering the first block
    block_t: str  # block i's module path template; its output (first element) is the stream after layer i
    attn_t: str | None
    heads_in_t: str | None
    mlp_t: str | None
    neurons_in_t: str | None
    shared: bool  # one module called once per layer (ALBERT, shared layers): a hook fires `layers` times, in order
    final_norm: str | None  # applied to the last block's output before the head
    head: str | None  # how logits are read: "linear", "module", "cls", "albert", "electra", "distilbert", "xlm",
    #                   "deberta" (None: the model has no LM head, e.g. MiniLM as a BertModel)
    head_path: str = ""  # the head module (or the decoder that holds it, for BERT2BERT)
    rescale: float | None = None  # the stream's factor before the head (T5's d_model ** -0.5 when tied)
    softcap: float | None = None  # logits = cap * tanh(logits / cap) (Gemma's final_logit_softcapping)

    @property
    def has_head(self) -> bool:
        return self.head is not None

    def _at(self, template: str | None, i: int, what: str) -> str:
        if template is None:
            raise ExplorerError(f"This {self.model_type} model has no {what} hook point that the explorer knows.")
        if not 0 <= i < self.layers:
            raise ExplorerError(f"Layer {i} is out of range: this model has layers 0 to {self.layers - 1}.")
        return template.format(i=i)

    def block(self, i: int) -> str:
        return self._at(self.block_t, i, "block")

    def attn(self, i: int) -> str:
        return self._at(self.attn_t, i, "attention-output")

    def heads_in(self, i: int) -> str:
        return self._at(self.heads_in_t, i, "per-head")

    def mlp(self, i: int) -> str:
        return self._at(self.mlp_t, i, "MLP-output")

    def neurons_in(self, i: int) -> str:
        return self._at(self.neurons_in_t, i, "neuron")

    def readout(self, model: nn.Module, hidden: torch.Tensor) -> torch.Tensor:
        """(..., d_model) stream -> (..., vocab) logits through the model's own final norm and output head."""
        if self.head is None:
            raise ExplorerError(f"This {self.model_type} model has no language-model head (it was saved without "
                                "one, like all-MiniLM-L6-v2): there is no vocabulary to read its layers into.")
        h = module(model, self.final_norm)(hidden) if self.final_norm else hidden
        return _HEADS[self.head](model, self, h)


def _linear_head(model: nn.Module, s: Sites, h: torch.Tensor) -> torch.Tensor:
    """A decoder's or seq2seq model's lm_head, with the extras its forward applies (from the card)."""
    if s.rescale:
        h = h * s.rescale  # T5 rescales before its tied output projection
    logits = module(model, s.head_path)(h)
    bias = getattr(model, "final_logits_bias", None)
    if isinstance(bias, torch.Tensor):
        logits = logits + bias.to(logits.device)
    return torch.tanh(logits / s.softcap) * s.softcap if s.softcap else logits


def _deberta(model: nn.Module, s: Sites, h: torch.Tensor) -> torch.Tensor:
    embeddings = module(model, "deberta.embeddings.word_embeddings")
    return module(model, s.head_path)(h, embeddings)


def _distilbert(model: nn.Module, s: Sites, h: torch.Tensor) -> torch.Tensor:
    x = model.activation(model.vocab_transform(h))  # type: ignore[operator]  # DistilBERT's own parts
    return model.vocab_projector(model.vocab_layer_norm(x))  # type: ignore[operator]


def _electra(model: nn.Module, s: Sites, h: torch.Tensor) -> torch.Tensor:
    return model.generator_lm_head(model.generator_predictions(h))  # type: ignore[operator]


_HEADS: dict[str, Callable[[nn.Module, Sites, torch.Tensor], torch.Tensor]] = {
    "linear": _linear_head,
    "module": lambda model, s, h: module(model, s.head_path)(h),
    "deberta": _deberta,
    "distilbert": _distilbert,
    "electra": _electra,
    "xlm": lambda model, s, h: module(model, s.head_path).proj(h),  # type: ignore[operator]
}


def _shared(model: nn.Module, found: Located, stack: Stack) -> bool:
    """One module called once per layer: ALBERT's card, or blocks made one by the Architecture page's knob."""
    if found.card.sharing == "all-layers" or "{i}" not in stack.block.path:
        return True
    blocks = [module(model, found.path(stack.block.path, i)) for i in range(found.shape(stack.name).layers)]
    return len({id(b) for b in blocks}) < len(blocks)


def _sites(model: nn.Module, found: Located, stack: Stack) -> Sites:
    block, shape, numbers = stack.block, found.shape(stack.name), found.numbers
    entry = found.path(stack.entry or block.path, 0)
    final_norm = found.path(stack.final_norm) if stack.final_norm else None
    return Sites(str(getattr(model.config, "model_type", found.card.model_type)), found.card.family, shape.layers,
                 shape.heads, shape.head_width, shape.d_model, shape.d_ff, entry, found.template(block.path),
                 found.template(block.attn), found.template(block.attention.out), found.template(block.mlp),
                 found.template(block.neurons), _shared(model, found, stack), final_norm, found.head,
                 found.head_path, numbers.logits_rescale, numbers.final_softcap)


def of(model: nn.Module) -> Sites:
    """The hook points of a loaded transformers model, or an ExplorerError saying its type has no card or its
    modules do not match it."""
    found = located.locate(model)
    return _sites(model, found, found.card.main)


def stack_of(model: nn.Module, name: str) -> Sites:
    """The hook points of one stack ("encoder" or "decoder"), the readout staying the model's own (the decoder's
    final norm and head)."""
    found = located.locate(model)
    if name not in found.stacks:
        raise ExplorerError(f"This {found.card.label} model has no {name} stack here (it has "
                            f"{', '.join(found.stacks)}): pick one it has.")
    main = _sites(model, found, found.card.main)
    own = _sites(model, found, found.card.stack(name))
    return replace(own, final_norm=main.final_norm, head=main.head, head_path=main.head_path)
