"""Variants that are not a transformers ``model_type``, built on top of transformers' classes.

Each is a small ``nn.Module`` so its layer tree and parameter counts are real:

- Sentence-BERT (Reimers & Gurevych 2019): encoder + mean pooling (+ L2 normalisation); the
  pooling has no parameters, which is the point: the sentence vector is free.
- ColBERT (Khattab & Zaharia 2020): BERT + a 128-d linear projection (no bias) per token.
- FastBERT (Liu et al. 2020): BERT + a small "student" classifier after every layer, so easy
  inputs can exit early.
- SpanBERT (Joshi et al. 2020): BERT MLM + the span-boundary objective head (two boundary
  tokens + a relative position embedding -> 2-layer MLP -> vocabulary, tied).
- StructBERT (Wang et al. 2019): BERT MLM + a 3-way sentence head (next / previous / random).
- ELECTRA (Clark et al. 2020): generator MLM + discriminator, sharing token embeddings.
- BERT2BERT (Rothe et al. 2020): an EncoderDecoderModel of two BERTs with cross-attention.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:  # transformers is imported where a config is built, not to type one
    from transformers import BertConfig, PretrainedConfig

__all__ = [
    "MAX_SPAN", "SentenceBert", "ColBert", "ExitClassifier", "FastBert", "SpanBoundaryHead", "SpanBert",
    "StructBert", "ElectraPair", "WHOLE_IS_BASE", "CUSTOM",
]


MAX_SPAN = 10  # SpanBERT clips span lengths at 10, so the SBO needs 10 relative positions


class SentenceBert(nn.Module):
    """Encoder + mean pooling over real tokens (+ normalisation). forward -> (B, hidden)."""

    def __init__(self, config: PretrainedConfig, extra: dict | None = None) -> None:
        super().__init__()
        from transformers import AutoModel

        self.encoder = AutoModel.from_config(config)
        self.normalize = bool((extra or {}).get("normalize", True))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        mask = torch.ones_like(input_ids) if attention_mask is None else attention_mask
        hidden = self.encoder(input_ids=input_ids, attention_mask=mask).last_hidden_state  # (B, T, H)
        m = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)  # (B, H)
        return nn.functional.normalize(pooled, dim=-1) if self.normalize else pooled


class ColBert(nn.Module):
    """BERT + linear projection of every token to ``dim`` (128). forward -> (B, T, dim)."""

    def __init__(self, config: PretrainedConfig, extra: dict | None = None) -> None:
        super().__init__()
        from transformers import AutoModel

        self.bert = AutoModel.from_config(config, add_pooling_layer=False)
        dim = int((extra or {}).get("dim", 128))
        self.colbert_projection = nn.Linear(config.hidden_size, dim, bias=False)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return nn.functional.normalize(self.colbert_projection(hidden), dim=-1)


class ExitClassifier(nn.Module):
    """FastBERT's student classifier: reduce -> self-attention -> classify the [CLS] position."""

    def __init__(self, hidden: int, width: int, labels: int) -> None:
        super().__init__()
        self.reduce = nn.Linear(hidden, width)
        self.attention = nn.MultiheadAttention(width, num_heads=2, batch_first=True)
        self.dense = nn.Linear(width, width)
        self.classify = nn.Linear(width, labels)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:  # (B, T, H) -> (B, labels)
        x = torch.tanh(self.reduce(hidden))
        x, _ = self.attention(x, x, x, need_weights=False)
        return self.classify(torch.tanh(self.dense(x[:, 0])))


class FastBert(nn.Module):
    """BERT with a classifier after every layer (the last one is the teacher)."""

    def __init__(self, config: PretrainedConfig, extra: dict | None = None) -> None:
        super().__init__()
        from transformers import AutoModel

        self.bert = AutoModel.from_config(config, add_pooling_layer=False)
        extra = extra or {}
        width, labels = int(extra.get("branch_hidden", 128)), int(extra.get("num_labels", 2))
        self.exits = nn.ModuleList(
            ExitClassifier(config.hidden_size, width, labels) for _ in range(config.num_hidden_layers)
        )

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        layers = out.hidden_states[1:]  # one (B, T, H) per layer
        return torch.stack([head(h) for head, h in zip(self.exits, layers, strict=True)], 1)  # (B, L, labels)


class SpanBoundaryHead(nn.Module):
    """SBO: [x_start-1 ; x_end+1 ; p_i] -> 2-layer GeLU MLP with LayerNorm -> hidden (B, S, H)."""

    def __init__(self, hidden: int, eps: float) -> None:
        super().__init__()
        self.position_embeddings = nn.Embedding(MAX_SPAN, hidden)
        self.mlp = nn.Sequential(
            nn.Linear(3 * hidden, hidden), nn.GELU(), nn.LayerNorm(hidden, eps=eps),
            nn.Linear(hidden, hidden), nn.GELU(), nn.LayerNorm(hidden, eps=eps),
        )

    def forward(self, left: torch.Tensor, right: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        return self.mlp(torch.cat([left, right, self.position_embeddings(position)], dim=-1))


class SpanBert(nn.Module):
    """BERT MLM (no NSP) + the span-boundary head; SBO logits reuse the MLM decoder."""

    def __init__(self, config: BertConfig, extra: dict | None = None) -> None:
        super().__init__()
        from transformers import BertForMaskedLM

        self.mlm = BertForMaskedLM(config)
        self.sbo_head = SpanBoundaryHead(config.hidden_size, config.layer_norm_eps)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.mlm(input_ids=input_ids, attention_mask=attention_mask).logits


class StructBert(nn.Module):
    """BERT MLM + a 3-way sentence-structural head (next / previous / random)."""

    def __init__(self, config: BertConfig, extra: dict | None = None) -> None:
        super().__init__()
        from transformers import BertForPreTraining

        self.bert = BertForPreTraining(config)
        self.bert.cls.seq_relationship = nn.Linear(config.hidden_size, 3)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask)


class ElectraPair(nn.Module):
    """ELECTRA pre-training: generator (small MLM) + discriminator sharing token embeddings."""

    def __init__(self, generator_config, discriminator_config) -> None:
        super().__init__()
        from transformers import ElectraForMaskedLM, ElectraForPreTraining

        self.discriminator = ElectraForPreTraining(discriminator_config)
        self.generator = ElectraForMaskedLM(generator_config)
        d_emb, g_emb = self.discriminator.electra.embeddings, self.generator.electra.embeddings
        if d_emb.word_embeddings.weight.shape == g_emb.word_embeddings.weight.shape:
            # The paper shares token (and position) embeddings between the two networks.
            g_emb.word_embeddings = d_emb.word_embeddings
            g_emb.position_embeddings = d_emb.position_embeddings
            self.generator.generator_lm_head.weight = d_emb.word_embeddings.weight

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        fake = self.generator(input_ids=input_ids, attention_mask=attention_mask).logits.argmax(-1)
        return self.discriminator(input_ids=fake, attention_mask=attention_mask).logits  # (B, T)


def _electra_pair(config: PretrainedConfig, extra: dict | None = None) -> ElectraPair:
    """The pair from the generator and discriminator configs ``explorer.architecture.build`` resolved into ``extra``."""
    extra = extra or {}
    return ElectraPair(extra.get("generator_config", config), extra.get("discriminator_config", config))


def bert2bert_config(config: PretrainedConfig) -> PretrainedConfig:
    """BERT2BERT's composite config from one BERT config: the encoder, and a copy as a decoder with
    cross-attention (Rothe et al. 2020)."""
    from transformers import BertConfig, EncoderDecoderConfig

    if isinstance(config, EncoderDecoderConfig):
        return config
    enc = BertConfig.from_dict(config.to_dict())
    dec = BertConfig.from_dict({**config.to_dict(), "is_decoder": True, "add_cross_attention": True})
    return EncoderDecoderConfig.from_encoder_decoder_configs(enc, dec)


def _bert2bert(config: PretrainedConfig, extra: dict | None = None):
    from transformers import EncoderDecoderModel

    return EncoderDecoderModel(config=bert2bert_config(config))


# Custom variants whose whole module is the "base model" (their published counts include it).
WHOLE_IS_BASE = frozenset({"sentence-bert", "colbert", "electra-pair", "bert2bert"})

CUSTOM: dict[str, Callable[..., nn.Module]] = {
    "sentence-bert": SentenceBert,
    "colbert": ColBert,
    "fastbert": FastBert,
    "spanbert": SpanBert,
    "structbert": StructBert,
    "electra-pair": _electra_pair,
    "bert2bert": _bert2bert,
}
