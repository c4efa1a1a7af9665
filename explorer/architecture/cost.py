"""Compute and memory cost: FLOPs per token and attention-score memory against sequence length.

Weights follow Kaplan et al. (2020, Table 1): a forward pass costs about 2 FLOPs per weight used in a
matrix multiply (embedding *lookups* are free, a tied output projection is not). Attention adds
``4 * layers * d_attn * context`` per token: the scores QK^T (Kaplan's ``2 * n_layer * n_ctx * d_attn``)
and the weighted sum of the values AV, as Hoffmann et al. (2022, Chinchilla, Appendix F) count both.

``d_attn`` is the attention's own width, heads x head width (:func:`attention_width`), not d_model: T5-11B
runs 128 heads x 128 = 16,384 against d_model 1,024, Gemma 3 270M 4 x 256 = 1,024 against 640, MobileBERT
its 128-wide bottleneck against 512. The context is how many keys each query's scores are computed for: every
key for full attention and for causal attention too (a dense kernel computes the whole T x T matrix and masks
half of it, and both papers count the whole context), the window plus global tokens for the sparse patterns of
Longformer, BigBird, GPT-3 and GPT-Neo (what their own kernels compute). DeBERTa's disentangled attention adds
its content-to-position and position-to-content scores over 2k relative positions and the projections of the
relative embeddings (He et al. 2021, eq. 2-4; :func:`disentangled_flops`). Checked against PyTorch's
``FlopCounterMode`` for every dense family (``tests/test_cost_flops.py``: within 3%).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch import nn

from explorer.architecture import layertree, modeltypes
from explorer.architecture.modeltypes import is_encoder_decoder, num_heads, num_layers

if TYPE_CHECKING:  # transformers is imported where a config is built, not to type one
    from transformers import PretrainedConfig

__all__ = ["Cost", "attention_flops", "attention_memory", "attention_width", "context", "disentangled_flops",
           "layer_counts", "matmul_flops", "model_attention_flops", "per_token"]


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

    def to_dict(self) -> dict[str, object]:
        return {"seq_len": self.seq_len, "matmul_flops": self.matmul_flops,
                "attention_flops": self.attention_flops, "context": self.context, "total": self.total}


def matmul_flops(model: nn.Module, config: PretrainedConfig, seq_len: int | None = None) -> int:
    """2 x every matrix weight used per token (aliases included: a tied LM head multiplies too). With
    ``seq_len``, a pooler (BERT's dense layer over the first token) counts once per sequence, not per token."""
    uses = layertree.module_uses(model, config)
    modules = dict(model.named_modules(remove_duplicate=False))
    total = 0.0
    for name, p in model.named_parameters(remove_duplicate=False):
        module = name.rpartition(".")[0]
        owner = modules.get(module)
        if owner is None or isinstance(owner, nn.Embedding) or p.dim() < 2:
            continue
        once = seq_len is not None and seq_len > 0 and module.endswith(("pooler.dense", "pooler"))
        total += 2 * p.numel() * uses.get(id(owner), 1) / (seq_len if once and seq_len else 1)
    return int(total)


def attention_width(config: PretrainedConfig) -> int:
    """``d_attn``: heads x head width of the attention (Kaplan's d_attn), from the config.

    >>> from explorer.architecture import build
    >>> [attention_width(build.make_config(k)) for k in ("bert-base", "t5-11b", "gemma3-270m", "mobilebert")]
    [768, 16384, 1024, 128]
    """
    width = modeltypes.head_width(config)
    return (num_heads(config) or 1) * width if width else 0


def layer_counts(config: PretrainedConfig) -> tuple[int, int, int]:
    """(self-attention layers, cross-attention layers, d_attn) of a config."""
    layers, width = num_layers(config) or 0, attention_width(config)
    if not is_encoder_decoder(config):
        return layers, 0, width
    dec = num_layers(config, "decoder") or layers
    return layers + dec, dec, width


def disentangled_flops(config: PretrainedConfig, seq_len: int) -> int:
    """Per-token FLOPs DeBERTa's disentangled attention adds to plain attention (0 for other models).

    Per layer, each of content-to-position and position-to-content (``pos_att_type``) scores every query
    against the 2k relative positions (2 x 2k x d_attn per token), and projects the 2k relative embeddings once
    per sequence (2 x 2k x d_model x d_attn, shared by the sequence's tokens). k is ``position_buckets`` (v3: 256),
    else the maximum relative distance (v1: at most the sequence length). v1 has projection weights of its own
    (``pos_proj``, ``pos_q_proj``), which :func:`matmul_flops` counts once per token: the difference is added.

    >>> from explorer.architecture import build
    >>> round(disentangled_flops(build.make_config("deberta-v3-base"), 512) / 1e6, 1)  # 12 layers
    47.2
    """
    types = str(getattr(config, "pos_att_type", "") or "")
    parts = sum(kind in types for kind in ("c2p", "p2c"))
    if not getattr(config, "relative_attention", False) or not parts or seq_len < 1:
        return 0
    max_rel = getattr(config, "max_relative_positions", -1) or -1
    max_rel = max_rel if max_rel >= 1 else int(config.max_position_embeddings)
    buckets = getattr(config, "position_buckets", -1) or -1
    own = config.model_type == "deberta" or not getattr(config, "share_att_key", False)
    span = buckets if buckets > 0 else (min(seq_len, max_rel) if config.model_type == "deberta" else max_rel)
    positions, width, d_model = 2 * span, attention_width(config), int(config.hidden_size)
    scores = parts * 2 * positions * width
    projections = parts * 2 * positions * d_model * width / seq_len - (parts * 2 * d_model * width if own else 0)
    return int((num_layers(config) or 0) * (scores + projections))


def context(attention: str, seq_len: int, config: PretrainedConfig, average_causal: bool = True) -> float:
    """Average number of keys a query attends to, averaged over layers (alternating patterns).

    Sparse kinds use the closed-form non-zero counts of :mod:`explorer.architecture.patterns` with the
    config's own window / block sizes. ``average_causal=False`` counts what a kernel computes: a causal
    layer as dense (a dense kernel scores the whole matrix, then masks), a local causal window as its band.
    """
    from explorer.architecture import patterns
    from explorer.architecture.patterns import config as patterns_config

    if attention in ("full", "encoder-decoder", "disentangled") or seq_len < 1:
        return float(seq_len)
    if attention == "causal":
        return (seq_len + 1) / 2 if average_causal else float(seq_len)
    cfg = config.to_dict()
    layers = max(1, num_layers(config) or 1)
    counts = []
    for layer in range(layers):
        _, spec = patterns_config.self_attention_spec(attention, cfg, layer, seq_len, (), 0, 1)
        if not average_causal and spec.kind == "causal":  # a dense kernel: the whole matrix
            counts.append(seq_len * seq_len)
        elif not average_causal and spec.kind == "local-causal":  # a banded kernel: the window's band
            counts.append(seq_len * min(spec.window, seq_len))
        else:
            counts.append(patterns.nnz_closed_form(spec))
    return sum(counts) / layers / seq_len


def attention_flops(config: PretrainedConfig, seq_len: int, attention: str = "full") -> int:
    """Per-token FLOPs of QK^T and the weighted sum of values (2 x 2 x d_attn per key scored), with DeBERTa's
    disentangled terms.

    >>> from explorer.architecture import build
    >>> attention_flops(build.make_config("bert-base"), 512)  # 4 x 12 layers x 768 x 512 keys
    18874368
    """
    self_layers, cross_layers, width = layer_counts(config)
    ctx = context(attention, seq_len, config, average_causal=False)  # a dense kernel scores every key
    plain = 4 * width * (self_layers * ctx + cross_layers * seq_len)
    return int(plain) + (disentangled_flops(config, seq_len) if attention == "disentangled" else 0)


def _configs(model: nn.Module, config: PretrainedConfig) -> list[PretrainedConfig]:
    """The configs of the attention stacks a model runs: both networks of an ELECTRA pair, the encoder-decoder a
    BERT config builds (BERT2BERT: a decoder with cross-attention beside the encoder), else its own."""
    parts = [getattr(model, name, None) for name in ("generator", "discriminator")]
    found = [p.config for p in parts if p is not None and hasattr(p, "config")]
    own = getattr(model, "config", None)
    if not found and own is not None and is_encoder_decoder(own) and not is_encoder_decoder(config):
        found = [own]
    return found or [config]


def model_attention_flops(model: nn.Module, config: PretrainedConfig, seq_len: int, attention: str = "full") -> int:
    """:func:`attention_flops` of every attention stack ``model`` runs (an ELECTRA pair runs two)."""
    return sum(attention_flops(c, seq_len, attention) for c in _configs(model, config))


def per_token(model: nn.Module, config: PretrainedConfig, seq_len: int, attention: str = "full") -> Cost:
    """Forward FLOPs per token for sequences of ``seq_len`` tokens.

    >>> from explorer.architecture import build
    >>> config = build.config_from_dict({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2,
    ...     "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})
    >>> per_token(build.instantiate(config, "base"), config, 128)
    Cost(seq_len=128, matmul_flops=131136, attention_flops=65536, context=128.0)
    """
    ctx = context(attention, seq_len, config, average_causal=False)
    return Cost(seq_len, matmul_flops(model, config, seq_len),
                model_attention_flops(model, config, seq_len, attention), ctx)


def attention_memory(config: PretrainedConfig, seq_len: int, attention: str = "full", bytes_per: int = 4) -> int:
    """Bytes of attention scores for one sequence: layers x heads x queries x keys stored.

    Full and causal layers store the whole (T, T) matrix; Longformer and BigBird store only
    the keys their pattern allows, which is what makes them linear in T.
    """
    self_layers, cross_layers, _ = layer_counts(config)
    heads = num_heads(config) or 1
    ctx = context(attention, seq_len, config, average_causal=False)
    return int(bytes_per * heads * seq_len * (self_layers * ctx + cross_layers * seq_len))
