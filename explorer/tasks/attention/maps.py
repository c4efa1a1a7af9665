"""The result of one extraction: :class:`AttentionMaps`, every attention matrix square and unpadded.

>>> import numpy as np
>>> from explorer.core.notices import Notice
>>> maps = AttentionMaps(model="m", tokens=("a", "b"), attentions=np.full((1, 2, 2, 2), 0.5, np.float32),
...                      family="encoder", source_format="square", n_input_tokens=3,
...                      notices=(Notice("truncated", "Cut to 2 tokens."),))
>>> maps.n_layers, maps.n_heads, maps.truncated, maps.to_dict()["notices"]
(1, 2, True, ['Cut to 2 tokens.'])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.notices import Notice, texts
from explorer.runtime.capacity import BASE_TOKENS, MAP_BYTES, MAX_TOKENS, viewer_limit  # one home for caps

__all__ = ["BASE_TOKENS", "MAP_BYTES", "MAX_TOKENS", "AttentionMaps", "viewer_limit"]


@dataclass(frozen=True, eq=False)
class AttentionMaps:
    """Attention weights of one text through one model, every matrix square and unpadded.

    ``attentions``: ``(layers, H, L, L)`` float32 (block masses when ``block > 1``, see below), row =
    query token, column = key token; it is the encoder's self-attention for encoder-decoders. ``decoder_attentions``:
    ``(Ld, H, T, T)`` and ``cross_attentions``: ``(Ld, H, T, L)`` for encoder-decoders only (else ``None``).
    ``notices``: what the user should know (truncation, sparse formats, random weights), by kind.
    """

    model: str
    tokens: tuple[str, ...]
    attentions: np.ndarray
    family: str  # "encoder" | "decoder" | "encoder-decoder"
    source_format: str  # "square" | "longformer-window" | "bigbird-block-sparse" | "bigbird-full"
    n_input_tokens: int  # tokens of the text before truncation (special tokens included)
    untrained: bool = False
    decoder_tokens: tuple[str, ...] = ()
    decoder_attentions: np.ndarray | None = None
    cross_attentions: np.ndarray | None = None
    global_positions: tuple[int, ...] = ()  # Longformer tokens with global attention
    notices: tuple[Notice, ...] = ()
    # Tokens per cell side of ``attentions``: 1 = every map in full. Above 1 (long texts on a GPU) the
    # maps were reduced layer by layer as they came (explorer.tasks.attention.blocks.block_mass): ``attentions``
    # is then ``(layers, H, ceil(L/block), ceil(L/block))`` block masses whose rows sum to 1.
    block: int = 1
    device: str = "cpu"  # what ran: set by explorer.tasks.attention.extract.extract from the loaded model
    device_name: str = "cpu"  # e.g. "cuda:0 (NVIDIA H100 80GB HBM3)"
    dtype: str = "float32"

    @property
    def n_layers(self) -> int:
        return int(self.attentions.shape[0])

    @property
    def n_heads(self) -> int:
        return int(self.attentions.shape[1])

    @property
    def truncated(self) -> bool:
        return self.n_input_tokens > len(self.tokens)

    def to_dict(self) -> dict[str, object]:
        """Shapes, tokens and notice texts (JSON-able; the tensors themselves are exported separately)."""
        d: dict[str, object] = {
            "model": self.model, "family": self.family, "source_format": self.source_format,
            "layers": self.n_layers, "heads": self.n_heads, "tokens": list(self.tokens),
            "n_tokens": len(self.tokens), "n_input_tokens": self.n_input_tokens,
            "truncated": self.truncated, "shape": list(self.attentions.shape),
            "untrained": self.untrained, "global_positions": list(self.global_positions),
            "notices": texts(self.notices), "block": self.block, "device": self.device,
            "device_name": self.device_name, "dtype": self.dtype,
        }
        if self.cross_attentions is not None and self.decoder_attentions is not None:
            d["decoder_tokens"] = list(self.decoder_tokens)
            d["decoder_shape"] = list(self.decoder_attentions.shape)
            d["cross_shape"] = list(self.cross_attentions.shape)
        return d
