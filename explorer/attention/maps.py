"""The result of one extraction: :class:`AttentionMaps`, every attention matrix square and unpadded.

>>> import numpy as np
>>> from explorer.notices import Notice
>>> maps = AttentionMaps(model="m", tokens=("a", "b"), attentions=np.full((1, 2, 2, 2), 0.5, np.float32),
...                      family="encoder", source_format="square", n_input_tokens=3,
...                      notices=(Notice("truncated", "Cut to 2 tokens."),))
>>> maps.n_layers, maps.n_heads, maps.truncated, maps.to_dict()["notices"]
(1, 2, True, ['Cut to 2 tokens.'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from explorer.notices import Notice, texts

__all__ = ["BASE_TOKENS", "MAP_BYTES", "MAX_TOKENS", "AttentionMaps", "viewer_limit"]

BASE_TOKENS = 512  # every model may show this many: 12 layers x 12 heads x 512^2 float32 is already 150 MB
MAP_BYTES = 12 * 12 * 512 * 512 * 4  # models with fewer maps may show longer texts within the same memory...
MAX_TOKENS = 1024  # ...up to this: Gemma 3's local layers (a 512-token window) need texts longer than 512


def viewer_limit(n_maps: int | None) -> int:
    """Tokens the viewer shows for a model with ``n_maps`` attention matrices (layers x heads, all stacks):
    as many as fit :data:`MAP_BYTES` of float32 maps, never fewer than 512 nor more than 1,024.

    >>> viewer_limit(12 * 12), viewer_limit(18 * 4), viewer_limit(24 * 16), viewer_limit(None)
    (512, 724, 512, 512)
    """
    if not n_maps or n_maps <= 0:
        return BASE_TOKENS
    return max(BASE_TOKENS, min(MAX_TOKENS, int((MAP_BYTES / (4 * n_maps)) ** 0.5)))


@dataclass(frozen=True, eq=False)
class AttentionMaps:
    """Attention weights of one text through one model, every matrix square and unpadded.

    ``attentions``: ``(layers, H, L, L)`` float32, row = query token, column = key token; it is
    the encoder's self-attention for encoder-decoders. ``decoder_attentions``: ``(Ld, H, T, T)``
    and ``cross_attentions``: ``(Ld, H, T, L)`` for encoder-decoders only (else ``None``).
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
    device: str = "cpu"  # what ran: set by explorer.attention.extract.extract from the loaded model
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

    def to_dict(self) -> dict[str, Any]:
        """Shapes, tokens and notice texts (JSON-able; the tensors themselves are exported separately)."""
        d: dict[str, Any] = {
            "model": self.model, "family": self.family, "source_format": self.source_format,
            "layers": self.n_layers, "heads": self.n_heads, "tokens": list(self.tokens),
            "n_tokens": len(self.tokens), "n_input_tokens": self.n_input_tokens,
            "truncated": self.truncated, "shape": list(self.attentions.shape),
            "untrained": self.untrained, "global_positions": list(self.global_positions),
            "notices": texts(self.notices), "device": self.device, "device_name": self.device_name,
            "dtype": self.dtype,
        }
        if self.cross_attentions is not None and self.decoder_attentions is not None:
            d["decoder_tokens"] = list(self.decoder_tokens)
            d["decoder_shape"] = list(self.decoder_attentions.shape)
            d["cross_shape"] = list(self.cross_attentions.shape)
        return d
