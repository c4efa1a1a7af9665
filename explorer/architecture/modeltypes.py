"""Facts about Hugging Face ``model_type`` values that several modules need (one home per rule).

>>> position_offset("roberta"), position_offset("bert"), position_offset("bigbird_pegasus")
(2, 0, 0)
>>> max_input_tokens({"model_type": "roberta", "max_position_embeddings": 514})
512
>>> bigbird_falls_back(704, block_size=64, num_random_blocks=3), bigbird_falls_back(705, 64, 3)
(True, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "POSITION_OFFSET_TYPES", "RELATIVE_POSITION_TYPES", "ROBERTA_STYLE_TOKENIZER_TYPES",
    "bigbird_falls_back", "max_input_tokens", "position_offset",
]

# RoBERTa-style position embeddings start at ``padding_idx + 1`` (= 2): two rows of
# ``max_position_embeddings`` are never used for tokens (514 rows -> 512 tokens). BART and
# BigBird-Pegasus also offset their learned positions, but add the offset to the table size
# themselves, so their ``max_position_embeddings`` is the real limit.
POSITION_OFFSET_TYPES: frozenset[str] = frozenset({"roberta", "longformer", "xlm-roberta", "camembert"})

# Relative position schemes: the config's max/n_positions is not enforced by the model.
RELATIVE_POSITION_TYPES: frozenset[str] = frozenset({"t5", "mt5", "umt5", "deberta", "deberta-v2"})

# Byte-level BPE models that add RoBERTa's special tokens (<s>, </s>, <pad>, <mask>) to GPT-2's files.
ROBERTA_STYLE_TOKENIZER_TYPES: tuple[str, ...] = (
    "roberta", "bart", "longformer", "deberta", "camembert", "xlm-roberta", "mbart")


def position_offset(model_type: str, pad_token_id: int | None = 1) -> int:
    """Rows of the position table a RoBERTa-style model never uses for tokens (``pad_token_id + 1``)."""
    if str(model_type) not in POSITION_OFFSET_TYPES:
        return 0
    return int(pad_token_id if pad_token_id is not None else 1) + 1


def _get(cfg: Mapping[str, Any] | Any, name: str) -> Any:
    return cfg.get(name) if isinstance(cfg, Mapping) else getattr(cfg, name, None)


def max_input_tokens(cfg: Mapping[str, Any] | Any) -> int | None:
    """Longest input (special tokens included) a config's absolute positions allow; None when unbounded.

    ``cfg`` is a config dict or a ``PretrainedConfig``.
    """
    model_type = str(_get(cfg, "model_type") or "")
    if model_type in RELATIVE_POSITION_TYPES:
        return None
    for name in ("max_position_embeddings", "n_positions", "n_ctx"):
        limit = _get(cfg, name)
        if isinstance(limit, int) and limit > 0:
            pad = _get(cfg, "pad_token_id")
            return limit - position_offset(model_type, pad if isinstance(pad, int) else 1)
    return None


def bigbird_falls_back(seq_len: int, block_size: int, num_random_blocks: int) -> bool:
    """BigBird's (and BigBird-Pegasus's) rule: ``seq_len <= (5 + 2 r) * block_size`` runs full attention.

    Both ``BigBirdModel.forward`` and ``BigBirdPegasusEncoder.forward`` switch to ``original_full``
    for such inputs, because the block-sparse layout needs 3 window + 2 global + r random blocks.
    """
    return int(seq_len) <= (5 + 2 * int(num_random_blocks)) * int(block_size)
