"""What one anatomy card says: how a model type embeds, positions, normalises, attends, mixes and reads out.

A card is data, the same for every checkpoint of its ``model_type``; the numbers that depend on a config (head
counts, windows, bases) come from :func:`explorer.architecture.anatomy.resolved`. Module paths are templates
relative to the *base model* (``{i}`` is the layer; a path without it is one module shared by every layer), except
the readout's, which are relative to the head class that wraps the base model (``lm_head``, ``cls.predictions``).

Norm placement decides where a block's norms (``Block.norms``, in the order the block applies them) go:
``post``: after each residual add (BERT); ``pre``: before each sublayer (GPT-2, T5); ``sandwich``: before and
after each sublayer (Gemma 3: four norms a block).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

__all__ = [
    "Attention", "AttentionKind", "AttentionSpec", "Block", "Card", "Embeddings", "EmbedScale", "Family", "Mlp",
    "MlpKind", "NormKind", "NormPlacement", "Norms", "PositionKind", "Positions", "Readout", "Residual", "ScaleKind",
    "Sharing", "Stack",
]

Family = Literal["encoder", "decoder", "encoder-decoder"]
PositionKind = Literal["learned-absolute", "sinusoidal", "relative-buckets", "disentangled", "rotary", "none"]
NormKind = Literal["layernorm", "rmsnorm", "affine"]  # affine: MobileBERT's NoNorm, x * w + b
NormPlacement = Literal["post", "pre", "sandwich"]
AttentionKind = Literal["full", "causal", "local-global", "sliding-window", "block-sparse"]
ScaleKind = Literal["inverse-sqrt-head", "none", "query-pre-attn-scalar", "inverse-sqrt-head-terms"]
MlpKind = Literal["dense", "gated", "bottleneck"]
Residual = Literal["sequential", "parallel"]
Sharing = Literal["none", "all-layers"]
EmbedScale = Literal["none", "sqrt-d", "config"]  # config: sqrt(d) when the config's scale_embedding says so


@dataclass(frozen=True)
class Embeddings:
    """Where a stack's input vectors come from (paths relative to the base model)."""

    token: str
    positions: str | None = None  # the learned or sinusoidal table added once, at the input
    token_types: str | None = None  # segment embeddings (BERT's sentence A/B)
    norm: str | None = None  # a norm applied to the summed embeddings
    projection: str | None = None  # factorised embeddings (ALBERT, ELECTRA) or MobileBERT's trigram mapping
    scale: EmbedScale = "none"  # Gemma, CTRL and M2M-100 multiply token embeddings by sqrt(d_model)


@dataclass(frozen=True)
class Positions:
    """How a stack knows where a token is, and the module that holds it (None: a formula, no weights)."""

    kind: PositionKind
    module: str | None = None


@dataclass(frozen=True)
class Attention:
    """One attention sublayer's projections (``qkv``: one fused projection, GPT-2's ``c_attn``)."""

    out: str  # the output projection: its input is the heads concatenated
    q: str | None = None
    k: str | None = None
    v: str | None = None
    qkv: str | None = None
    q_norm: str | None = None  # qk-norm: Gemma 3 normalises each head's query and key
    k_norm: str | None = None


@dataclass(frozen=True)
class Block:
    """One layer's modules. ``attn``/``mlp``: the module whose output is that sublayer's contribution to the stream
    (before the residual add, through the block's norms); ``neurons``: the MLP's down projection (its input is the
    neurons)."""

    path: str  # the block module ("encoder.layer.{i}"); its output is the stream after the layer
    attn: str
    mlp: str
    neurons: str
    attention: Attention
    norms: tuple[str, ...] = ()  # in the order the block applies them (see the module docstring)
    mlp_up: str | None = None
    mlp_gate: str | None = None
    mlp_gated: tuple[str, str] | None = None  # (gate, up) where the config names a gated activation (T5 v1.1)
    cross: Attention | None = None  # a decoder's attention to the encoder's output
    cross_norms: tuple[str, ...] = ()
    bias: str | None = None  # a relative-position bias table (T5: layer 0's, shared by the stack)


@dataclass(frozen=True)
class Stack:
    """A stack of blocks: the only one, or an encoder-decoder's encoder or decoder."""

    name: Literal["encoder", "decoder"]
    blocks: str  # the ModuleList of blocks ("" for a shared block or parallel lists: XLM)
    block: Block
    embeddings: Embeddings
    positions: Positions
    final_norm: str | None = None  # applied after the last block
    entry: str | None = None  # the module whose input is the stream entering the first block (default: block 0)


@dataclass(frozen=True)
class Norms:
    kind: NormKind
    placement: NormPlacement
    plus_one: bool = False  # Gemma's RMSNorm scales by (1 + w), its weights stored around 0
    qk_norm: bool = False


@dataclass(frozen=True)
class AttentionSpec:
    kind: AttentionKind  # of the first stack (an encoder-decoder's decoder is causal, with cross-attention)
    scale: ScaleKind  # what q.k is multiplied by: 1/sqrt(d_head), nothing (T5), Gemma's query_pre_attn_scalar
    cross: bool = False


@dataclass(frozen=True)
class Mlp:
    kind: MlpKind
    activation_fields: tuple[str, ...]  # config fields naming the activation, first one set wins
    width_fields: tuple[str, ...]  # config fields holding the hidden width of the MLP
    decoder_width_fields: tuple[str, ...] = ()  # an encoder-decoder's decoder, where it has its own
    activation_default: str = "gelu"  # where no field names one (CTRL's ReLU is fixed)
    width_ratio: int | None = None  # width = ratio * d_model where the config leaves it unset (GPT-2's n_inner)
    stacked_field: str | None = None  # MobileBERT: num_feedforward_networks FFNs one after another


@dataclass(frozen=True)
class Readout:
    """How the last stream becomes logits: the head modules a head class adds (tried in order, relative to it)."""

    heads: tuple[tuple[str, str], ...]  # (path, how it is read: "linear", "module", "deberta", ...)
    softcap_field: str | None = None  # logits = cap * tanh(logits / cap) (Gemma's final_logit_softcapping)
    logits_bias: bool = False  # a final_logits_bias buffer added after the projection (BART, BigBird-Pegasus)
    rescale: bool = False  # T5: the stream times d_model ** -0.5 before a tied projection


@dataclass(frozen=True)
class Card:
    """One model type's anatomy."""

    model_type: str
    label: str
    family: Family
    prefix: str  # the attribute a head class keeps the base model under (transformers' base_model_prefix; "" where
    #              the head class holds the stacks itself, as T5's and BERT2BERT's do)
    stacks: tuple[Stack, ...]  # one, or an encoder's and a decoder's
    norms: Norms
    attention: AttentionSpec
    mlp: Mlp
    readout: Readout
    residual: Residual = "sequential"
    sharing: Sharing = "none"
    optional: tuple[str, ...] = ()  # paths a config may leave out (ELECTRA's projection when the widths agree)
    notes: tuple[str, ...] = ()  # what else a reader should know, in words

    def stack(self, name: str) -> Stack:
        for stack in self.stacks:
            if stack.name == name:
                return stack
        raise KeyError(name)

    @property
    def main(self) -> Stack:
        """The stack whose layers form the prediction: the decoder's for an encoder-decoder."""
        return self.stacks[-1]

    def to_dict(self) -> dict[str, object]:
        return _jsonable(asdict(self))  # type: ignore[return-value]


def _jsonable(value: object) -> object:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value
