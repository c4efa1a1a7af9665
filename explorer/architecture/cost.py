"""Compute and memory cost: FLOPs per token and attention-score memory against sequence length.

Weights follow Kaplan et al. (2020, Table 1): a forward pass costs about 2 FLOPs per weight used in a
matrix multiply (embedding *lookups* are free, a tied output projection is not). Attention adds
4 * layers * d_model * context, where the context is how many keys each query sees: all of them for
full attention, about half on average for causal, the window plus global tokens for Longformer and
BigBird. Kaplan's Table 1 counts only the scores QK^T (2 * n_layer * n_ctx * d_attn); the factor 4
also counts the weighted sum of the values AV, as Hoffmann et al. (2022, Chinchilla, Appendix F) do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from torch import nn

from explorer.architecture import layertree
from explorer.architecture.modeltypes import is_encoder_decoder, num_heads, num_layers

if TYPE_CHECKING:  # transformers is imported where a config is built, not to type one
    from transformers import PretrainedConfig

__all__ = ["Cost", "matmul_flops", "layer_counts", "context", "attention_flops", "per_token", "attention_memory"]


@dataclass(frozen=True)
class Cost:
    """Per-token forward FLOPs at one sequence length, split into weights and attention."""

    seq_len: int
    matmul_flops: int
    attention_flops: int
    context: float  # keys each query attends to, on average

    @property
    def total(self) -> int:
        return self.matmul_flops + self.attention_flops

    def to_dict(self) -> dict[str, Any]:
        return {"seq_len": self.seq_len, "matmul_flops": self.matmul_flops,
                "attention_flops": self.attention_flops, "context": self.context, "total": self.total}


def matmul_flops(model: nn.Module, config: PretrainedConfig) -> int:
    """2 x every matrix weight used per token (aliases included: a tied LM head multiplies too)."""
    uses = layertree.module_uses(model, config)
    modules = dict(model.named_modules(remove_duplicate=False))
    total = 0
    for name, p in model.named_parameters(remove_duplicate=False):
        owner = modules.get(name.rpartition(".")[0])
        if owner is None or isinstance(owner, nn.Embedding) or p.dim() < 2:
            continue
        total += 2 * p.numel() * uses.get(id(owner), 1)
    return total


def layer_counts(config: PretrainedConfig) -> tuple[int, int, int]:
    """(self-attention layers, cross-attention layers, d_model) of a config."""
    stack = config.encoder if config.model_type == "encoder-decoder" else config  # composite: BERT2BERT
    layers, d_model = num_layers(config) or 0, int(getattr(stack, "hidden_size", 0) or 0)
    if not is_encoder_decoder(config):
        return layers, 0, d_model
    dec = num_layers(config, "decoder") or layers
    return layers + dec, dec, d_model


def context(attention: str, seq_len: int, config: PretrainedConfig, average_causal: bool = True) -> float:
    """Average number of keys a query attends to, averaged over layers (alternating patterns).

    Sparse kinds use the closed-form non-zero counts of :mod:`explorer.patterns` with the
    config's own window / block sizes. ``average_causal=False`` counts a causal layer as
    dense: what a dense kernel stores before masking.
    """
    from explorer import patterns

    if attention in ("full", "encoder-decoder", "disentangled") or seq_len < 1:
        return float(seq_len)
    if attention == "causal":
        return (seq_len + 1) / 2 if average_causal else float(seq_len)
    cfg = config.to_dict()
    layers = max(1, num_layers(config) or 1)
    counts = []
    for layer in range(layers):
        _, spec = patterns.self_attention_spec(attention, cfg, layer, seq_len, (), 0, 1)
        dense_causal = not average_causal and spec.kind == "causal"
        counts.append(seq_len * seq_len if dense_causal else patterns.nnz_closed_form(spec))
    return sum(counts) / layers / seq_len


def attention_flops(config: PretrainedConfig, seq_len: int, attention: str = "full") -> int:
    """Per-token FLOPs of QK^T and the weighted sum of values (2 x 2 x d_model per key seen).

    >>> from explorer.architecture import build
    >>> attention_flops(build.make_config("bert-base"), 512)  # 4 x 12 layers x 768 x 512 keys
    18874368
    """
    self_layers, cross_layers, d_model = layer_counts(config)
    ctx = context(attention, seq_len, config)
    return int(4 * d_model * (self_layers * ctx + cross_layers * seq_len))


def per_token(model: nn.Module, config: PretrainedConfig, seq_len: int, attention: str = "full") -> Cost:
    """Forward FLOPs per token for sequences of ``seq_len`` tokens.

    >>> from explorer.architecture import build
    >>> config = build.config_from_dict({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2,
    ...     "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})
    >>> per_token(build.instantiate(config, "base"), config, 128)
    Cost(seq_len=128, matmul_flops=139264, attention_flops=65536, context=128.0)
    """
    ctx = context(attention, seq_len, config)
    return Cost(seq_len, matmul_flops(model, config), attention_flops(config, seq_len, attention), ctx)


def attention_memory(config: PretrainedConfig, seq_len: int, attention: str = "full", bytes_per: int = 4) -> int:
    """Bytes of attention scores for one sequence: layers x heads x queries x keys stored.

    Full and causal layers store the whole (T, T) matrix; Longformer and BigBird store only
    the keys their pattern allows, which is what makes them linear in T.
    """
    self_layers, cross_layers, _ = layer_counts(config)
    heads = num_heads(config) or 1
    ctx = context(attention, seq_len, config, average_causal=False)
    return int(bytes_per * heads * seq_len * (self_layers * ctx + cross_layers * seq_len))
