"""The six pattern kinds: :class:`PatternSpec` (plain parameters, no model needed) and its constructors.

Kinds (the rules follow the Hugging Face implementations):

- ``full``: every query sees every key (BERT family; encoder self-attention).
- ``causal``: query ``i`` sees keys ``j <= i`` (GPT family; decoder self-attention).
- ``cross``: full ``(T_dec, T_enc)`` rectangle (decoder -> encoder attention).
- ``local-causal``: causal and ``i - j < window`` (GPT-Neo "local" layers: the mask is
  ``tril(ones) ^ tril(ones, -window_size)``, so ``window`` keys including the token itself).
- ``sliding-window``: Longformer. ``|i - j| <= window/2`` (its ``one_sided_attn_window_size``),
  optionally dilated (only every ``dilation``-th key, reaching ``dilation * window/2``), plus global
  tokens whose rows and columns are full.
- ``block-sparse``: BigBird ITC. Blocks of ``block_size``; the first and last blocks are global,
  each other block row sees its 3 neighbouring blocks and ``num_random_blocks`` random blocks
  outside those. Inputs with ``T <= (5 + 2 r) * block_size`` fall back to full attention
  (:func:`explorer.architecture.modeltypes.bigbird_falls_back`); other lengths are padded to a multiple of
  ``block_size`` and the mask is cropped back to ``T``.

Every constructor validates its parameters and raises :class:`ExplorerError` with what to change.

>>> spec = sliding_window(1024, 512, (0, 7))
>>> spec.kind, spec.window, spec.global_positions
('sliding-window', 512, (0, 7))
>>> effective_kind(block_sparse(704, 64, 3)), effective_kind(block_sparse(705, 64, 3))
('full', 'block-sparse')
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from explorer.architecture.modeltypes import bigbird_falls_back
from explorer.core.errors import ExplorerError, shorten

__all__ = [
    "KINDS", "MAX_LEN", "PatternSpec", "block_sparse", "causal", "check_len", "cross", "effective_kind",
    "full", "local_causal", "sliding_window",
]

KINDS = ("full", "causal", "cross", "local-causal", "sliding-window", "block-sparse")
# Longest sequence any function here accepts: far beyond every catalogued model, and the
# closed forms stay exact in Python ints; it only stops absurd inputs early.
MAX_LEN = 1 << 20


@dataclass(frozen=True)
class PatternSpec:
    """Parameters of one attention pattern of one layer and head.

    Every head of a layer has this pattern, except that BigBird draws random blocks per head
    (same count, so the same costs); ``seed`` picks one such draw.
    """

    kind: str
    q_len: int
    k_len: int
    window: int = 0  # sliding-window: attention_window (w/2 each side); local-causal: window_size
    dilation: int = 1
    global_positions: tuple[int, ...] = ()
    block_size: int = 0
    num_random_blocks: int = 0
    seed: int = 0
    d_head: int = 64

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["global_positions"] = list(self.global_positions)
        return d

    def with_length(self, seq_len: int) -> PatternSpec:
        """The same pattern for another length; global positions past the end are dropped."""
        kept = tuple(p for p in self.global_positions if p < seq_len)  # cross: decoder = encoder length
        return _validated(replace(self, q_len=seq_len, k_len=seq_len, global_positions=kept))


def check_len(name: str, value: int) -> int:
    """``value`` as an int if it is a whole number of tokens in ``1..MAX_LEN``, else an ExplorerError."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ExplorerError(f"{name} must be a whole number, got {shorten(value)!r}.")
    if not 0 < int(value) <= MAX_LEN:
        raise ExplorerError(f"{name} must be between 1 and {MAX_LEN:,} tokens, got {value:,}.")
    return int(value)


def _validated(spec: PatternSpec) -> PatternSpec:
    """Check a spec's parameters; every constructor goes through here."""
    if spec.kind not in KINDS:
        raise ExplorerError(f"Unknown pattern kind {shorten(spec.kind)!r}; choose one of {', '.join(KINDS)}.")
    check_len("Query length", spec.q_len)
    check_len("Key length", spec.k_len)
    if spec.kind != "cross" and spec.q_len != spec.k_len:
        raise ExplorerError(f"A {spec.kind} self-attention pattern must be square.")
    if spec.kind in ("local-causal", "sliding-window") and spec.window < 1:
        raise ExplorerError(f"The {spec.kind} window must be at least 1 token, got {spec.window}.")
    if spec.kind == "sliding-window" and spec.window % 2:
        raise ExplorerError(f"Longformer's attention_window must be even (w/2 per side), got {spec.window}.")
    if spec.dilation < 1:
        raise ExplorerError(f"Dilation must be at least 1, got {spec.dilation}.")
    bad = [p for p in spec.global_positions if not 0 <= p < spec.q_len]
    if bad:
        raise ExplorerError(
            f"Global position(s) {bad} are outside the sequence (0..{spec.q_len - 1}): pick smaller positions."
        )
    if spec.kind == "block-sparse" and (spec.block_size < 1 or spec.num_random_blocks < 0):
        raise ExplorerError("BigBird needs block_size >= 1 and num_random_blocks >= 0.")
    return spec


def full(seq_len: int, d_head: int = 64) -> PatternSpec:
    """Bidirectional self-attention: every token sees every token."""
    return _validated(PatternSpec("full", seq_len, seq_len, d_head=d_head))


def causal(seq_len: int, d_head: int = 64) -> PatternSpec:
    """Decoder self-attention: token i sees tokens 0..i."""
    return _validated(PatternSpec("causal", seq_len, seq_len, d_head=d_head))


def cross(dec_len: int, enc_len: int, d_head: int = 64) -> PatternSpec:
    """Encoder-decoder cross-attention: every decoder token sees every encoder token."""
    return _validated(PatternSpec("cross", dec_len, enc_len, d_head=d_head))


def local_causal(seq_len: int, window_size: int, d_head: int = 64) -> PatternSpec:
    """GPT-Neo local layer: token i sees the ``window_size`` tokens ending at i."""
    return _validated(PatternSpec("local-causal", seq_len, seq_len, window=window_size, d_head=d_head))


def sliding_window(
    seq_len: int, attention_window: int, global_positions: tuple[int, ...] = (0,),
    dilation: int = 1, d_head: int = 64,
) -> PatternSpec:
    """Longformer: a band of ``attention_window // 2`` keys each side plus global tokens."""
    glob = tuple(sorted({int(p) for p in global_positions}))
    spec = PatternSpec("sliding-window", seq_len, seq_len, window=int(attention_window),
                       dilation=int(dilation), global_positions=glob, d_head=d_head)
    return _validated(spec)


def block_sparse(
    seq_len: int, block_size: int, num_random_blocks: int, seed: int = 0, d_head: int = 64
) -> PatternSpec:
    """BigBird ITC block-sparse attention (falls back to full for short inputs)."""
    spec = PatternSpec("block-sparse", seq_len, seq_len, block_size=int(block_size),
                       num_random_blocks=int(num_random_blocks), seed=int(seed), d_head=d_head)
    return _validated(spec)


def effective_kind(spec: PatternSpec) -> str:
    """The kind actually run: BigBird on a short input is ``full``."""
    if spec.kind == "block-sparse" and bigbird_falls_back(spec.q_len, spec.block_size, spec.num_random_blocks):
        return "full"
    return spec.kind
