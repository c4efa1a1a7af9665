"""Hook points named once per architecture: where a model's residual stream, sublayers, heads and neurons live.

The lens, attribution and interventions all ask the same questions of a loaded model: which modules are its
blocks, what enters the first one, which module adds the attention (or MLP) sublayer's output to the stream,
where the heads are concatenated, where the MLP's neurons are, and how a block's output becomes logits through the
model's own final norm and output head. :func:`of` answers them from the model's module tree and its config, by
trying each site's known spellings in order (the TransformerLens idea of one name per hook point, found rather than
tabled per checkpoint), so a downloaded or lab-trained checkpoint of any catalog family gets the same answers as
the bundled ones.

For an encoder-decoder the sites are the decoder's: its layers are where the next token is formed.

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
from dataclasses import dataclass

import torch
from torch import nn

from explorer.architecture import modeltypes
from explorer.core.errors import ExplorerError
from explorer.runtime import modelkind

__all__ = ["Sites", "capture", "first", "module", "of"]

# Where the stack of blocks lives, tried in order (an encoder-decoder's decoder first).
STACKS = (
    "model.decoder.layers", "decoder.block", "decoder.layers", "decoder.bert.encoder.layer",  # encoder-decoders
    "model.layers", "transformer.h", "gpt_neox.layers", "model.decoder.layers",  # decoders
    "bert.encoder.layer", "roberta.encoder.layer", "electra.encoder.layer", "deberta.encoder.layer",
    "mobilebert.encoder.layer", "longformer.encoder.layer", "distilbert.transformer.layer",
    "encoder.layer", "layers", "h", "layer",  # a bare base model (MiniLM as BertModel, GPT2Model)
)
# ALBERT: one group of layers applied num_hidden_layers times; XLM: parallel lists, no block module.
ALBERT_GROUPS = ("albert.encoder.albert_layer_groups", "encoder.albert_layer_groups")
XLM_STACKS = ("transformer", "")
# Within a block (or ALBERT's group layer): the first spelling that exists. Attention and MLP name the module
# whose output is the sublayer's contribution to the stream before the residual add (through the block's norms).
ATTN = ("attention.output.dense", "attention.out_lin", "attention.dense", "self_attn", "attn",
        "multi_head_attention", "layer.0.SelfAttention", "attention")
HEADS_IN = ("self_attn.o_proj", "self_attn.out_proj", "attn.c_proj", "attn.out_proj", "attn.o_proj",
            "attn.attention.out_proj", "attention.output.dense", "attention.out_lin", "attention.dense",
            "multi_head_attention.dense", "layer.0.SelfAttention.o", "attention.o_proj")
MLP = ("mlp", "output.dense", "ffn.lin2", "ffn_output", "fc2", "ffn", "layer.2.DenseReluDense",
       "layer.1.DenseReluDense")
NEURONS_IN = ("mlp.down_proj", "mlp.c_proj", "mlp.fc_out", "mlp.dense_4h_to_h", "output.dense", "ffn.lin2",
              "ffn_output", "ffn.2", "fc2", "layer.2.DenseReluDense.wo", "layer.1.DenseReluDense.wo")
# The norm applied after the last block, beside the stack's parent (exact names: BART's layernorm_embedding is
# applied before the first block and must not be taken for it).
FINAL_NORMS = ("norm", "ln_f", "final_layer_norm", "layer_norm", "layernorm", "final_layernorm")
# Pegasus-style decoders apply the norm they call "layernorm_embedding" after their last layer (BART, whose
# module has the same name, applies it before the first): the one name that means two places.
FINAL_NORM_OF_TYPE = {"bigbird_pegasus": "layernorm_embedding", "pegasus": "layer_norm"}


def module(model: nn.Module, path: str) -> nn.Module:
    """The submodule at a dotted path ("" is the model itself)."""
    return model.get_submodule(path) if path else model


def _has(model: nn.Module, path: str) -> bool:
    try:
        module(model, path)
    except AttributeError:
        return False
    return True


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


def _in_features(layer: nn.Module) -> int | None:
    """Input width of a Linear or GPT-2's Conv1D (weight (in, out))."""
    if isinstance(layer, nn.Linear):
        return layer.in_features
    weight = getattr(layer, "weight", None)
    return int(weight.shape[0]) if isinstance(weight, torch.Tensor) and weight.dim() == 2 else None


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
    """A decoder's or seq2seq model's lm_head, with the extras its forward applies."""
    cfg = model.config
    if s.model_type in ("t5", "mt5", "umt5") and getattr(cfg, "tie_word_embeddings", False):
        h = h * (s.d_model ** -0.5)  # T5 rescales before its tied output projection
    logits = module(model, s.head_path)(h)
    bias = getattr(model, "final_logits_bias", None)
    if isinstance(bias, torch.Tensor):
        logits = logits + bias.to(logits.device)
    cap = getattr(cfg, "final_logit_softcapping", None)
    return torch.tanh(logits / cap) * cap if cap else logits


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


def _head(model: nn.Module, family: str) -> tuple[str | None, str]:
    """(how logits are read, the head's path) from the modules a head class adds to its base model."""
    lm = getattr(model, "lm_head", None)
    if isinstance(lm, nn.Linear):
        return "linear", "lm_head"
    if isinstance(lm, nn.Module):
        return "module", "lm_head"  # RoBERTa, XLM-R, Longformer: dense, gelu, norm, decoder in one module
    for path in ("cls.predictions", "predictions", "decoder.cls.predictions"):  # BERT family, ALBERT, BERT2BERT
        if _has(model, path):
            return "module", path
    if _has(model, "lm_predictions"):
        return "deberta", "lm_predictions"
    if _has(model, "generator_lm_head"):
        return "electra", ""
    if _has(model, "vocab_projector"):
        return "distilbert", ""
    if _has(model, "pred_layer"):
        return "xlm", "pred_layer"
    return None, ""


def _config_dict(model: nn.Module) -> dict[str, object]:
    config = getattr(model, "config", None)
    if config is None:
        raise ExplorerError("This is not a transformers model (it has no config): its hook points are unknown.")
    return config.to_dict()


def _list(model: nn.Module, path: str) -> nn.ModuleList | None:
    """The non-empty ModuleList at ``path``, or None."""
    found = module(model, path) if _has(model, path) else None
    return found if isinstance(found, nn.ModuleList) and len(found) else None


def _stack(model: nn.Module) -> tuple[str, int, bool] | None:
    """(block path template, layers, shared) of the known stacks; None when no known stack is found."""
    for path in STACKS:
        if (blocks := _list(model, path)) is not None:
            return f"{path}.{{i}}", len(blocks), len({id(b) for b in blocks}) < len(blocks)
    for path in ALBERT_GROUPS:
        if (groups := _list(model, path)) is not None:
            cfg = _config_dict(model)
            if len(groups) != 1 or int(str(cfg.get("inner_group_num", 1))) != 1:
                return None  # several groups or inner layers: their order is not one module's calls
            return f"{path}.0.albert_layers.0", int(modeltypes.num_layers(cfg) or 0), True
    return None


def _within(model: nn.Module, block0: str, spellings: tuple[str, ...]) -> str | None:
    """The first spelling found inside block 0, as a template over layers."""
    for rel in spellings:
        if _has(model, f"{block0}.{rel}"):
            return f"{block0}.{rel}".replace(block0, _template_of(block0), 1)
    return None


def _template_of(block0: str) -> str:
    """Block 0's path as a template: "model.layers.0" -> "model.layers.{i}" (a shared module keeps its path)."""
    head, _, last = block0.rpartition(".")
    return f"{head}.{{i}}" if last == "0" and not block0.endswith("albert_layers.0") else block0


def _xlm(model: nn.Module) -> tuple[str, int] | None:
    for base in XLM_STACKS:
        prefix = f"{base}." if base else ""
        if (attentions := _list(model, f"{prefix}attentions")) is not None and _has(model, f"{prefix}ffns"):
            return prefix, len(attentions)
    return None


def _final_norm(model: nn.Module, block_t: str, model_type: str) -> str | None:
    parent = block_t.split(".{i}")[0].rpartition(".")[0]
    names = (FINAL_NORM_OF_TYPE[model_type],) if model_type in FINAL_NORM_OF_TYPE else FINAL_NORMS
    for name in names:
        path = f"{parent}.{name}" if parent else name
        if _has(model, path) and not isinstance(module(model, path), nn.ModuleList):
            return path
    return None


def _widths(cfg: Mapping[str, object], model: nn.Module, heads_in: str | None, family: str,
            ) -> tuple[int, int, int, int | None]:
    """(heads, head width, d_model, d_ff) from the config, the decoder's where it has its own."""
    stack = cfg.get("decoder") if isinstance(cfg.get("decoder"), Mapping) else cfg
    assert isinstance(stack, Mapping)
    width = modeltypes.head_width(stack) or 0
    heads = modeltypes.config_int(stack, "decoder_attention_heads", *modeltypes.HEAD_FIELDS) \
        if family == "encoder-decoder" else modeltypes.num_heads(stack)
    if heads_in and (n := _in_features(module(model, heads_in))) and width:
        heads = n // width  # what the projection actually concatenates (a decoder with its own head count)
    d_model = modeltypes.config_int(stack, *modeltypes.HIDDEN_FIELDS) or 0
    d_ff = modeltypes.config_int(stack, "intermediate_size", "d_ff", "n_inner", "hidden_dim", "decoder_ffn_dim",
                                 "ffn_dim", "dff")
    return int(heads or 0), int(width), int(d_model), d_ff


def of(model: nn.Module) -> Sites:
    """The hook points of a loaded transformers model, or an ExplorerError saying its family is not known."""
    cfg = _config_dict(model)
    model_type, family = str(cfg.get("model_type") or "?"), modelkind.config_family(cfg)
    head, head_path = _head(model, family)
    stack = _stack(model)
    xlm = _xlm(model) if stack is None else None
    if stack is not None:
        block_t, layers, shared = stack
        block0 = block_t.format(i=0)
        entry = block0
        attn, heads_in = _within(model, block0, ATTN), _within(model, block0, HEADS_IN)
        mlp, neurons_in = _within(model, block0, MLP), _within(model, block0, NEURONS_IN)
        final_norm = _final_norm(model, block_t, model_type)
    elif xlm is not None:
        prefix, layers = xlm
        block_t, entry, shared = f"{prefix}layer_norm2.{{i}}", f"{prefix}attentions.0", False
        attn = heads_in = f"{prefix}attentions.{{i}}.out_lin"
        mlp, neurons_in, final_norm = f"{prefix}ffns.{{i}}", f"{prefix}ffns.{{i}}.lin2", None
    else:
        raise ExplorerError(f"The explorer does not know where the layers of this {model_type} model are, so it "
                            "cannot read or change them. Pick a model of a catalog family.")
    heads, width, d_model, d_ff = _widths(cfg, model, heads_in.format(i=0) if heads_in else None, family)
    return Sites(model_type, family, layers, heads, width, d_model, d_ff, entry, block_t, attn, heads_in, mlp,
                 neurons_in, shared, final_norm, head, head_path)


def capture(model: nn.Module, sites: Sites, inputs: Mapping[str, torch.Tensor],
            ) -> tuple[torch.Tensor, list[torch.Tensor], object]:
    """One forward of ``model(**inputs)`` with hooks: (the stream entering the first block (B, T, d), every
    block's output in call order [(B, T, d)] * layers, the model's own output).

    A shared block (ALBERT) is hooked once and fires once per layer. Inputs padded inside the model (Longformer
    pads to its window) come back cut to the input's length.
    """
    entered: list[torch.Tensor] = []
    outs: list[torch.Tensor] = []

    def pre(_m: nn.Module, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
        if not entered:
            entered.append(first(args[0] if args else kwargs.get("hidden_states")))

    def post(_m: nn.Module, _args: object, output: object) -> None:
        outs.append(first(output))

    blocks = {id(m): m for m in (module(model, sites.block(i)) for i in range(sites.layers))}
    handles = [module(model, sites.entry).register_forward_pre_hook(pre, with_kwargs=True)]
    handles += [m.register_forward_hook(post) for m in blocks.values()]
    try:
        output = model(**inputs)
    finally:
        for h in handles:
            h.remove()
    length = _length(inputs, sites)
    return entered[0][:, :length], [o[:, :length] for o in outs], output


def _length(inputs: Mapping[str, torch.Tensor], sites: Sites) -> int:
    key = "decoder_input_ids" if sites.family == "encoder-decoder" and "decoder_input_ids" in inputs else (
        "input_ids" if "input_ids" in inputs else "inputs_embeds")
    return int(inputs[key].shape[1])
