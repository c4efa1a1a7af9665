"""Parameter categories: which component of a transformer a parameter belongs to.

The rules read the parameter's dotted name (and the type of the module owning it). Order
matters: task heads first (an MLM head has its own LayerNorm and dense layer), then
embeddings, relative positions, layer norms, cross-attention, attention, feed-forward.
They were written against every architecture in the catalog; ``tests/test_components.py``
checks that no catalog variant leaves parameters in "other". :func:`breakdown` sums a model's
unique parameters per category.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.architecture.layertree import index_parameters
from explorer.architecture.modeltypes import is_encoder_decoder

if TYPE_CHECKING:  # transformers is imported where a config is built, not to type one
    from torch import nn
    from transformers import PretrainedConfig

__all__ = [
    "ORDER", "HEADS", "POSITION", "TOKEN_TYPE", "PROJECTION", "RELATIVE", "NORM_TYPES", "NORM_NAMES", "CROSS",
    "ATTENTION", "FEED_FORWARD", "breakdown", "categorize",
]


ORDER = (
    "token embeddings", "position embeddings", "token-type embeddings", "embedding projection",
    "attention Q/K/V/O", "relative position", "feed-forward", "layer norms", "pooler",
    "cross-attention", "head: MLM", "head: NSP/SOP", "head: LM", "head: RTD", "head: SBO",
    "head: ColBERT projection", "head: FastBERT exits", "head: QA", "head: classifier", "other",
)

# Path segment -> head category. "lm_head" is an MLM head on encoders, an LM head on decoders.
HEADS = {
    "predictions": "head: MLM", "generator_predictions": "head: MLM", "generator_lm_head": "head: MLM",
    "vocab_transform": "head: MLM", "vocab_layer_norm": "head: MLM", "vocab_projector": "head: MLM",
    "pred_layer": "head: MLM", "seq_relationship": "head: NSP/SOP", "sop_classifier": "head: NSP/SOP",
    "discriminator_predictions": "head: RTD", "sbo_head": "head: SBO",
    "colbert_projection": "head: ColBERT projection", "exits": "head: FastBERT exits",
    "qa_outputs": "head: QA", "classifier": "head: classifier", "final_logits_bias": "head: LM",
}
POSITION = {"position_embeddings", "wpe", "embed_positions", "positions_embed"}
TOKEN_TYPE = {"token_type_embeddings", "lang_embeddings"}
PROJECTION = {"embedding_hidden_mapping_in", "embedding_transformation", "embeddings_project",
              "embed_proj", "bottleneck", "project_in", "project_out"}
RELATIVE = {"rel_embeddings", "relative_attention_bias", "pos_proj", "pos_q_proj", "pos_key_proj",
            "pos_query_proj"}
NORM_TYPES = ("LayerNorm", "NoNorm", "T5LayerNorm", "RMSNorm")
NORM_NAMES = ("layernorm", "layer_norm", "ln_", "ln", "norm")
CROSS = ("crossattention", "encdecattention", "encoder_attn")
ATTENTION = ("attention", "attn", "self_attn", "selfattention", "query", "key", "value", "q_proj",
             "k_proj", "v_proj", "out_proj", "c_attn", "q", "k", "v", "o", "q_lin", "k_lin", "v_lin",
             "out_lin", "wq", "wk", "wv", "in_proj_weight", "in_proj_bias")
FEED_FORWARD = ("intermediate", "output", "mlp", "ffn", "densereludense", "fc1", "fc2", "lin1", "lin2",
                "c_fc", "c_proj", "dense", "ffn_output", "conv")


def _head(segments: list[str], decoderish: bool) -> str | None:
    for seg in segments:
        if seg == "lm_head":
            return "head: LM" if decoderish else "head: MLM"
        if seg in HEADS:
            return HEADS[seg]
    return None


def _embedding(segments: list[str], owner: str) -> str | None:
    if owner == "Embedding":  # any nn.Embedding subclass (learned positions, scaled tables...)
        module = segments[-2] if len(segments) > 1 else ""
        if module in POSITION:
            return "position embeddings"
        if module in TOKEN_TYPE:
            return "token-type embeddings"
        if module in RELATIVE:
            return "relative position"
        return "token embeddings"
    if any(s in PROJECTION for s in segments):
        return "embedding projection"
    return None


def _is_norm(segments: list[str], owner: str) -> bool:
    if owner.endswith(NORM_TYPES) or "Norm" in owner:
        return True
    module = segments[-2].lower() if len(segments) > 1 else ""
    return any(module.startswith(n) for n in NORM_NAMES) and owner not in ("Linear", "Conv1D")


def categorize(name: str, owner: str = "", decoderish: bool = False) -> str:
    """The component category of parameter ``name`` (owned by a module of type ``owner``)."""
    segments = name.split(".")
    lower = [s.lower() for s in segments]
    head = _head(segments, decoderish)
    if head:
        return "head: LM" if decoderish and head == "head: MLM" else head
    if "pooler" in lower:
        return "pooler"
    found = _embedding(segments, owner)
    if found:
        return found
    if any(s in RELATIVE for s in segments):
        return "relative position"
    if _is_norm(segments, owner):
        return "layer norms"
    if any(s.startswith(CROSS) for s in lower):
        return "cross-attention"
    if any(s in ATTENTION or s.endswith(("attention", "attn")) for s in lower):
        return "attention Q/K/V/O"
    if any(s in FEED_FORWARD for s in lower):
        return "feed-forward"
    return "other"


def breakdown(model: nn.Module, config: PretrainedConfig | None = None) -> dict[str, int]:
    """Unique parameters per component category; the values sum exactly to the total."""
    index = index_parameters(model)
    decoderish = bool(config is not None and (
        is_encoder_decoder(config) or getattr(config, "is_decoder", False)
        or type(model).__name__.endswith(("ForCausalLM", "LMHeadModel"))
    ))
    totals: dict[str, int] = {c: 0 for c in ORDER}
    for name, n in index.numel.items():
        totals[categorize(name, index.owners.get(name, ""), decoderish)] += n
    return {c: v for c, v in totals.items() if v}
