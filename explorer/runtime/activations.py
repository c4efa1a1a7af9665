"""The memory one inference forward needs beyond the weights, known from the config before it runs, and batches
planned to stay within it.

Without gradients a layer's activations are freed before the next layer runs, so the peak of a forward over B
sequences of T tokens is one layer's live tensors: the residual stream and its query, key, value and context
projections (about 6 x hidden values per token), the feed-forward's intermediate activation before and after its
nonlinearity (2 x intermediate), and the attention scores with their softmax (2 x heads x T per token, the
(B, H, T, T) grid), in the model's dtype. The last term grows with T: at 512 tokens BERT-base holds 49 KB of
scores per token against 43 KB for everything else, and ``similarity --batch-size 1024`` over 512-token texts
would have asked for 48 GB in one forward. Batches are therefore cut by padded tokens, not only by count.

>>> bert = {"hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12}
>>> per_token_bytes(bert, 512)  # float32 bytes per padded token at 512 tokens
92160
>>> tokens_per_forward(bert, 512) // 512  # 512-token sequences per forward within FORWARD_BYTES
11
>>> plan_batches([5, 3, 9, 3], max_batch=2, token_budget=100)
[[1, 3], [0, 2]]
>>> plan_batches([5, 3, 9, 3], max_batch=8, token_budget=12)
[[1, 3], [0], [2]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from explorer.architecture.modeltypes import HEAD_FIELDS, config_int

__all__ = ["FORWARD_BYTES", "per_token_bytes", "plan_batches", "tokens_per_forward"]

FORWARD_BYTES = 512 * 2**20  # one inference forward's activations at most (beside the weights)
_RESIDUAL, _FEED_FORWARD, _SCORES = 6, 2, 2  # values per token: see the module docstring


def _get(config: object, *names: str, default: int) -> int:
    for name in names:
        value = config.get(name) if isinstance(config, Mapping) else getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return default


def per_token_bytes(config: object, length: int, dtype_bytes: int = 4) -> int:
    """Peak activation bytes per padded token of a forward over sequences of ``length`` tokens (a config dict or
    a transformers config)."""
    hidden = _get(config, "hidden_size", "d_model", "n_embd", "dim", default=768)
    inter = _get(config, "intermediate_size", "d_ff", "n_inner", "hidden_dim", "encoder_ffn_dim", default=4 * hidden)
    heads = config_int(config, *HEAD_FIELDS) or 12
    return dtype_bytes * (_RESIDUAL * hidden + _FEED_FORWARD * inter + _SCORES * heads * max(1, length))


def tokens_per_forward(config: object, length: int, budget: int | None = None,
                       dtype_bytes: int = 4) -> int:
    """Padded tokens one forward may hold when its longest sequence has ``length`` tokens, within ``budget``
    bytes (default :data:`FORWARD_BYTES`); at least one sequence: a single long text is never refused here, its
    own bound is its model's context."""
    bound = FORWARD_BYTES if budget is None else budget
    return max(length, bound // per_token_bytes(config, length, dtype_bytes))


def plan_batches(lengths: Sequence[int], max_batch: int, token_budget: int) -> list[list[int]]:
    """Indices into ``lengths`` grouped into batches, shortest first: sequences of similar length share a
    batch (little padding); a batch holds at most ``max_batch`` sequences and, padded to its longest,
    ``token_budget`` tokens (a single sequence longer than the budget still gets a batch of its own)."""
    batches: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lambda j: lengths[j]):
        current = batches[-1] if batches else []
        # sorted ascending, so sequence i is the longest of the batch it joins: padded size = (n + 1) * len_i
        if not current or len(current) >= max_batch or (len(current) + 1) * lengths[i] > token_budget:
            batches.append(current := [])
        current.append(i)
    return batches
