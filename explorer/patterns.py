"""Sparse attention patterns: who may attend to whom, as boolean masks and closed-form costs.

A pattern is a :class:`PatternSpec` (plain parameters, no model needed). Every mask is a
boolean array of shape ``(q_len, k_len)`` (query x key); ``True`` means the query token may
attend to that key. Masks are produced in row chunks (:func:`mask_rows`) so that counting or
drawing a 16k x 16k pattern never materialises it; :func:`nnz_closed_form` gives the same count
from a formula, and the tests check that both agree for every kind.

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
  (``BigBirdModel.forward``); other lengths are padded to a multiple of ``block_size`` and the
  mask is cropped back to ``T``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from explorer.errors import ExplorerError

KINDS = ("full", "causal", "cross", "local-causal", "sliding-window", "block-sparse")
FP32_BYTES = 4
# Rows x columns handled per chunk when a mask is streamed (about 4 MB of bools).
CHUNK_CELLS = 1 << 22
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

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["global_positions"] = list(self.global_positions)
        return d

    def with_length(self, seq_len: int) -> PatternSpec:
        """The same pattern for another length; global positions past the end are dropped."""
        kept = tuple(p for p in self.global_positions if p < seq_len)  # cross: decoder = encoder length
        return _validated(replace(self, q_len=seq_len, k_len=seq_len, global_positions=kept))


def _check_len(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ExplorerError(f"{name} must be a whole number, got {value!r}.")
    if not 0 < int(value) <= MAX_LEN:
        raise ExplorerError(f"{name} must be between 1 and {MAX_LEN:,} tokens, got {value:,}.")
    return int(value)


def _validated(spec: PatternSpec) -> PatternSpec:
    """Check a spec's parameters; every constructor goes through here."""
    if spec.kind not in KINDS:
        raise ExplorerError(f"Unknown pattern kind {spec.kind!r}; choose one of {', '.join(KINDS)}.")
    _check_len("Query length", spec.q_len)
    _check_len("Key length", spec.k_len)
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


# --- constructors (plain parameters) -------------------------------------------------------


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


def bigbird_falls_back(seq_len: int, block_size: int, num_random_blocks: int) -> bool:
    """BigBird's rule: ``seq_len <= (5 + 2 r) * block_size`` runs full attention instead.

    2 global blocks + 3 sliding blocks + r random blocks + a buffer of r blocks must fit.
    """
    return seq_len <= (5 + 2 * num_random_blocks) * block_size


def effective_kind(spec: PatternSpec) -> str:
    """The kind actually run: BigBird on a short input is ``full``."""
    if spec.kind == "block-sparse" and bigbird_falls_back(spec.q_len, spec.block_size, spec.num_random_blocks):
        return "full"
    return spec.kind


# --- BigBird block structure -----------------------------------------------------------------


@lru_cache(maxsize=64)
def bigbird_random_blocks(n_blocks: int, num_random_blocks: int, seed: int) -> np.ndarray:
    """Random key blocks of each middle query block row, seeded: ``(n_blocks - 2, r)`` int.

    Row ``i - 1`` holds the picks of query block ``i`` (1..n-2): ``r`` distinct blocks among the
    middle blocks, never the global blocks (0, n-1) nor the window ``i-1, i, i+1``, as in the
    paper. (transformers' training-mode sampler may overlap the window for the last two rows;
    in eval mode it fills every random slot with block 0, already global, so inference reaches
    window + global pairs only while still computing the r extra blocks. The diagram shows
    the paper's rule, which is what training sees.)
    """
    rng = np.random.default_rng(seed)
    picks = np.zeros((max(n_blocks - 2, 0), num_random_blocks), dtype=np.int64)
    middle = np.arange(1, n_blocks - 1)
    for i in range(1, n_blocks - 1):
        allowed = middle[np.abs(middle - i) > 1]
        if allowed.size < num_random_blocks:
            raise ExplorerError(
                f"{n_blocks} blocks leave only {allowed.size} random candidates for block {i}: "
                f"use a longer input or fewer random blocks."
            )
        picks[i - 1] = np.sort(rng.choice(allowed, size=num_random_blocks, replace=False))
    picks.flags.writeable = False  # cached: callers must not modify it
    return picks


def bigbird_block_layout(spec: PatternSpec) -> np.ndarray:
    """Which (query block, key block) pairs attend: ``(n, n)`` bool, ``n = ceil(T / block_size)``."""
    n = -(-spec.q_len // spec.block_size)
    layout = np.zeros((n, n), dtype=bool)
    layout[[0, -1], :] = True  # global query blocks see everything
    layout[:, [0, -1]] = True  # ... and everything sees them
    idx = np.arange(n)
    for offset in (-1, 0, 1):  # sliding window of 3 blocks
        rows = idx[(idx + offset >= 0) & (idx + offset < n)]
        layout[rows, rows + offset] = True
    if n > 2 and spec.num_random_blocks:
        rand = bigbird_random_blocks(n, spec.num_random_blocks, spec.seed)
        layout[np.repeat(np.arange(1, n - 1), spec.num_random_blocks), rand.ravel()] = True
    return layout


# --- masks -----------------------------------------------------------------------------------


def mask_rows(spec: PatternSpec, start: int, stop: int) -> np.ndarray:
    """Query rows ``start:stop`` of the pattern: ``(stop - start, k_len)`` bool."""
    i = np.arange(start, stop, dtype=np.int32)[:, None]  # (R, 1); int32 halves the memory traffic
    j = np.arange(spec.k_len, dtype=np.int32)[None, :]  # (1, K)
    kind = effective_kind(spec)
    if kind in ("full", "cross"):
        return np.ones((stop - start, spec.k_len), dtype=bool)
    if kind == "causal":
        return j <= i
    if kind == "local-causal":
        return (j <= i) & (i - j < spec.window)
    if kind == "sliding-window":
        diff = i - j
        band = np.abs(diff) <= spec.dilation * (spec.window // 2)
        if spec.dilation > 1:  # only every dilation-th key inside the (wider) reach
            band &= diff % spec.dilation == 0
        is_global = np.zeros(spec.k_len, dtype=bool)
        is_global[list(spec.global_positions)] = True
        return band | is_global[start:stop, None] | is_global[None, :]
    b = spec.block_size  # block-sparse: expand the block layout to tokens
    block_rows = bigbird_block_layout(spec)[np.arange(start, stop) // b]  # (R, n_blocks)
    return np.repeat(block_rows, b, axis=1)[:, : spec.k_len]


def iter_mask_chunks(spec: PatternSpec, rows_multiple: int = 1) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(start_row, rows)`` chunks covering the mask, each about ``CHUNK_CELLS`` cells.

    Chunk heights are multiples of ``rows_multiple`` so that pooling can work chunk by chunk.
    """
    step = max(rows_multiple, (CHUNK_CELLS // spec.k_len) // rows_multiple * rows_multiple)
    for start in range(0, spec.q_len, step):
        yield start, mask_rows(spec, start, min(start + step, spec.q_len))


def build_mask(spec: PatternSpec, max_cells: int = 1 << 26) -> np.ndarray:
    """The whole mask ``(q_len, k_len)`` bool; refuses more than ``max_cells`` entries."""
    if spec.q_len * spec.k_len > max_cells:
        raise ExplorerError(
            f"A {spec.q_len:,} x {spec.k_len:,} mask is too large to build whole: "
            f"use pooled_mask() to draw it or nnz_closed_form() to count it."
        )
    return mask_rows(spec, 0, spec.q_len)


def nnz_from_mask(spec: PatternSpec) -> int:
    """Count allowed pairs by streaming the mask (never holds more than one chunk)."""
    return int(sum(int(np.count_nonzero(rows)) for _, rows in iter_mask_chunks(spec)))


@dataclass(frozen=True)
class MaskView:
    """What a diagram needs: the max-pooled mask ``(ceil(q/f), ceil(k/f))`` bool, the pooling
    factor ``f`` and the exact non-zero count of the full mask, counted in the same pass."""

    pooled: np.ndarray
    factor: int
    nnz_counted: int


def mask_view(spec: PatternSpec, max_cells: int = 512) -> MaskView:
    """Stream the mask once: max-pool it for drawing and count its True entries.

    A cell is True when any query/key pair inside its ``f x f`` tile may attend, so thin
    bands stay visible; ``f = 1`` (exact) when both sides fit in ``max_cells``.
    """
    f = max(1, -(-max(spec.q_len, spec.k_len) // max_cells))
    n_rows, n_cols = -(-spec.q_len // f), -(-spec.k_len // f)
    out = np.zeros((n_rows, n_cols), dtype=bool)
    pad_cols, nnz = n_cols * f - spec.k_len, 0
    for start, rows in iter_mask_chunks(spec, rows_multiple=f):
        nnz += int(np.count_nonzero(rows))
        pad_rows = -(-rows.shape[0] // f) * f - rows.shape[0]
        tiles = np.pad(rows, ((0, pad_rows), (0, pad_cols)))  # pad with False: pooling ignores it
        tiles = tiles.reshape(-1, f, n_cols, f).any(axis=(1, 3))  # (rows/f, n_cols)
        out[start // f : start // f + tiles.shape[0]] = tiles
    return MaskView(out, f, nnz)


def pooled_mask(spec: PatternSpec, max_cells: int = 512) -> tuple[np.ndarray, int]:
    """Max-pooled mask for drawing and its factor ``f`` (see :func:`mask_view`)."""
    view = mask_view(spec, max_cells)
    return view.pooled, view.factor


# --- closed forms ----------------------------------------------------------------------------


def _band_degree(pos: int, seq_len: int, half: int, dilation: int) -> int:
    """Keys of a dilated band seen by query ``pos``: itself plus up to ``half`` on each side."""
    return 1 + min(half, pos // dilation) + min(half, (seq_len - 1 - pos) // dilation)


def nnz_sliding_window(seq_len: int, window: int, dilation: int, global_positions: tuple[int, ...]) -> int:
    """Longformer pairs: dilated band united with the full rows and columns of global tokens.

    ``|band u rows(G) u cols(G)| = |band| + |rows(G) u cols(G)| - |band n (rows(G) u cols(G))|``,
    where the last term is ``2 * sum(deg(g)) - |band n (G x G)|`` (the band is symmetric);
    the G x G term costs O(g^2), never O(T^2).
    """
    t, d, h = seq_len, dilation, window // 2
    k = min(h, (t - 1) // d)  # offsets 1..k fit inside the sequence
    band = t + 2 * (k * t - d * k * (k + 1) // 2)
    g = len(global_positions)
    if not g:
        return band
    rows_cols = 2 * g * t - g * g
    deg = sum(_band_degree(p, t, h, d) for p in global_positions)
    both = sum(1 for a in global_positions for b in global_positions
               if abs(a - b) <= h * d and (a - b) % d == 0)
    return band + rows_cols - (2 * deg - both)


def nnz_block_sparse(seq_len: int, block_size: int, num_random_blocks: int) -> int:
    """BigBird pairs (no fallback): block count of the padded layout, then crop to ``seq_len``.

    With n blocks: 2 global rows of n blocks; rows 1 and n-2 see 2 global + 2 window + r blocks
    (their third window block is global); the n-4 others see 2 + 3 + r. Cropping the ``p`` padded
    tokens removes ``p`` full rows and ``p`` full columns of the (global) last block.
    """
    b, r = block_size, num_random_blocks
    n = -(-seq_len // b)
    blocks = 2 * n + 2 * (4 + r) + (n - 4) * (5 + r)
    padded, p = n * b, n * b - seq_len
    return blocks * b * b - 2 * p * padded + p * p


def nnz_closed_form(spec: PatternSpec) -> int:
    """Number of True entries of the mask, from a formula (exact, any length)."""
    t, kind = spec.q_len, effective_kind(spec)
    if kind in ("full", "cross"):
        return spec.q_len * spec.k_len
    if kind == "causal":
        return t * (t + 1) // 2
    if kind == "local-causal":
        w = min(spec.window, t)  # first w rows see 1..w keys, the rest see w
        return w * (w + 1) // 2 + (t - w) * w
    if kind == "sliding-window":
        return nnz_sliding_window(t, spec.window, spec.dilation, spec.global_positions)
    return nnz_block_sparse(t, spec.block_size, spec.num_random_blocks)


# --- costs -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PatternStats:
    """Cost of one pattern for one head in one layer.

    ``score_memory_bytes`` counts the fp32 scores the pattern needs (4 bytes per allowed pair:
    what a sparse kernel stores); ``dense_score_memory_bytes`` is the full ``q x k`` matrix a
    dense implementation materialises before masking. ``flops`` = ``4 * d_head * nnz``: a
    multiply-add per head dimension for QK^T and again for the weighted sum of V.
    """

    kind: str
    effective_kind: str
    q_len: int
    k_len: int
    nnz: int
    density: float
    score_memory_bytes: int
    dense_score_memory_bytes: int
    flops: int
    note: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def describe(spec: PatternSpec) -> str:
    """One line naming the parameters of the pattern (shown under each diagram)."""
    kind = spec.kind
    if kind == "local-causal":
        return f"causal window of {spec.window} tokens (window_size)"
    if kind == "sliding-window":
        dil = f", dilation {spec.dilation}" if spec.dilation > 1 else ""
        return (f"attention_window {spec.window} ({spec.window // 2} each side{dil}), "
                f"global tokens {list(spec.global_positions)}")
    if kind == "block-sparse":
        limit = (5 + 2 * spec.num_random_blocks) * spec.block_size
        base = f"block_size {spec.block_size}, {spec.num_random_blocks} random blocks, seed {spec.seed}"
        if effective_kind(spec) == "full":
            return f"{base}; {spec.q_len} <= (5 + 2*{spec.num_random_blocks})*{spec.block_size} = {limit}: falls back to full"
        return f"{base}; 3 window + 2 global blocks"
    return {"full": "every token sees every token", "causal": "token i sees tokens 0..i",
            "cross": f"{spec.q_len} decoder tokens x {spec.k_len} encoder tokens"}[kind]


def pattern_stats(spec: PatternSpec, nnz: int | None = None) -> PatternStats:
    """Costs of ``spec``: closed form (no mask built), or from ``nnz`` counted on the mask."""
    nnz = nnz_closed_form(spec) if nnz is None else int(nnz)
    cells = spec.q_len * spec.k_len
    return PatternStats(
        kind=spec.kind, effective_kind=effective_kind(spec), q_len=spec.q_len, k_len=spec.k_len,
        nnz=nnz, density=nnz / cells, score_memory_bytes=FP32_BYTES * nnz,
        dense_score_memory_bytes=FP32_BYTES * cells, flops=4 * spec.d_head * nnz, note=describe(spec),
    )


def default_lengths(lo: int = 512, hi: int = 16_384, per_octave: int = 4) -> tuple[int, ...]:
    """Geometric grid of sequence lengths from ``lo`` to ``hi`` (both included)."""
    n = round(np.log2(hi / lo) * per_octave)
    return tuple(sorted({int(round(lo * 2 ** (k / per_octave))) for k in range(n + 1)}))


@dataclass(frozen=True)
class CostCurve:
    """Per-head, per-layer cost against sequence length (closed form, mean over ``layers``)."""

    label: str
    lengths: tuple[int, ...]
    nnz: tuple[float, ...]
    density: tuple[float, ...]
    score_memory_bytes: tuple[float, ...]
    flops: tuple[float, ...]
    max_positions: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def cost_curve(
    specs: list[PatternSpec] | PatternSpec, lengths: tuple[int, ...] | None = None,
    label: str = "", max_positions: int | None = None,
) -> CostCurve:
    """Closed-form costs of the layer patterns ``specs`` at each length, averaged over layers.

    Averaging matters for alternating models: GPT-Neo's half-global layers keep it quadratic.
    """
    specs = [specs] if isinstance(specs, PatternSpec) else list(specs)
    if not specs:
        raise ExplorerError("cost_curve needs at least one pattern.")
    lengths = lengths or default_lengths()
    rows = [[pattern_stats(s.with_length(t)) for s in specs] for t in lengths]  # [len][layer]

    def mean(attr: str) -> tuple[float, ...]:
        return tuple(float(np.mean([getattr(s, attr) for s in r])) for r in rows)

    return CostCurve(label or specs[0].kind, tuple(lengths), mean("nnz"), mean("density"),
                     mean("score_memory_bytes"), mean("flops"), max_positions)


# --- patterns of catalogued variants ---------------------------------------------------------

PARTS = ("auto", "encoder", "decoder", "cross")
_FULL_LABELS = ("full", "disentangled", "encoder-decoder")  # DeBERTa changes scores, not who attends


def _first(cfg: dict[str, Any], *names: str) -> Any:
    """The first of ``names`` present (and not None) in a config dict."""
    return next((cfg[n] for n in names if cfg.get(n) is not None), None)


def head_dim(cfg: dict[str, Any]) -> int:
    """Per-head width d_head (T5 states it as d_kv; the others as hidden / heads)."""
    if cfg.get("d_kv"):
        return int(cfg["d_kv"])
    hidden = _first(cfg, "hidden_size", "d_model", "n_embd", "dim", "emb_dim")
    heads = _first(cfg, "num_attention_heads", "encoder_attention_heads", "num_heads", "n_head", "n_heads")
    return int(hidden) // int(heads) if hidden and heads else 64


def num_layers(cfg: dict[str, Any], part: str = "encoder") -> int:
    """Layers of the encoder (or only stack) or, with ``part="decoder"``, of the decoder."""
    if part in ("decoder", "cross"):
        # BERT2BERT's decoder is a copy of its (BERT) encoder config: num_hidden_layers
        n = _first(cfg, "num_decoder_layers", "decoder_layers", "num_layers", "n_layer", "num_hidden_layers")
    else:
        n = _first(cfg, "num_hidden_layers", "encoder_layers", "num_layers", "n_layer", "n_layers")
    return int(n or 1)


def alternating_layers(cfg: dict[str, Any]) -> list[str]:
    """GPT-Neo style per-layer kinds: ``attention_layers`` or expanded ``attention_types``.

    ``attention_types = [[["global", "local"], 12]]`` means that pair repeated 12 times.
    """
    if cfg.get("attention_layers"):
        return [str(k) for k in cfg["attention_layers"]]
    kinds = [str(k) for pair, times in cfg.get("attention_types") or [] for _ in range(int(times)) for k in pair]
    if not kinds:
        raise ExplorerError("This config has neither attention_layers nor attention_types: cannot tell "
                            "which layers are local.")
    return kinds


# RoBERTa-style models count two reserved rows (padding offset) in max_position_embeddings.
_PADDING_OFFSET_TYPES = {"roberta": 2, "longformer": 2, "xlm-roberta": 2, "camembert": 2}
_LOCAL_NAMES = {"local", "sparse", "banded", "local-banded"}
# Relative position schemes: the config's max/n_positions is not enforced by the model.
_RELATIVE_TYPES = {"t5", "mt5", "umt5", "deberta", "deberta-v2"}


def max_positions(variant: Any, cfg: dict[str, Any], part: str = "encoder") -> int | None:
    """Longest input the published model takes (None: relative positions, no hard limit)."""
    if variant.model_type in _RELATIVE_TYPES:
        return None
    names = ("max_decoder_position_embeddings",) if part in ("decoder", "cross") else (
        "max_encoder_position_embeddings",)
    limit = _first(cfg, *names, "max_position_embeddings", "n_positions", "n_ctx")
    if limit is None:
        return None
    return int(limit) - _PADDING_OFFSET_TYPES.get(str(cfg.get("model_type")), 0)


def self_attention_spec(attention: str, cfg: dict[str, Any], layer: int, seq_len: int,
               global_positions: tuple[int, ...], seed: int, dilation: int) -> tuple[str, PatternSpec]:
    """Self-attention pattern of one layer of the encoder (or the only stack) and its label."""
    d = head_dim(cfg)
    if attention in _FULL_LABELS:
        return "full", full(seq_len, d)
    if attention == "causal":
        return "causal", causal(seq_len, d)
    if attention == "sliding-window+global":
        win = cfg.get("attention_window", 512)
        w = int(win[layer] if isinstance(win, list) else win)  # one window per layer
        return f"window {w}", sliding_window(seq_len, w, (0, *global_positions), dilation, d)
    if attention == "block-sparse":
        if cfg.get("attention_type") == "original_full":
            return "full (attention_type original_full)", full(seq_len, d)
        b, r = int(cfg.get("block_size", 64)), int(cfg.get("num_random_blocks", 3))
        spec = block_sparse(seq_len, b, r, seed, d)
        return ("block-sparse" if effective_kind(spec) == "block-sparse" else "full (short-input fallback)"), spec
    if attention == "local-global-alternating":
        kind = alternating_layers(cfg)[layer]
        if kind in _LOCAL_NAMES:
            w = int(_first(cfg, "window_size", "local_window", "attention_window") or 256)
            return f"{kind} (window {w})", local_causal(seq_len, w, d)
        return f"{kind} (causal)", causal(seq_len, d)
    raise ExplorerError(f"No pattern is known for attention {attention!r}: update explorer/patterns.py.")


def _resolve_part(variant: Any, part: str) -> str:
    """``self`` for single-stack models; encoder/decoder/cross for encoder-decoders."""
    if part not in PARTS:
        raise ExplorerError(f"Unknown part {part!r}; choose one of {', '.join(PARTS)}.")
    if variant.family == "encoder-decoder":
        return "encoder" if part == "auto" else part
    if part in ("auto", variant.family):
        return "self"
    raise ExplorerError(f"{variant.name} is a {variant.family} model: it has no {part} attention.")


def layer_count(variant: Any, cfg: dict[str, Any], part: str) -> int:
    """Number of layers whose pattern can be picked for this part."""
    if part in ("decoder", "cross"):
        return num_layers(cfg, "decoder")
    if variant.attention == "local-global-alternating":
        return len(alternating_layers(cfg))
    if variant.attention == "sliding-window+global" and isinstance(cfg.get("attention_window"), list):
        return len(cfg["attention_window"])
    return num_layers(cfg, "encoder")


@dataclass(frozen=True)
class VariantPattern:
    """The pattern of one layer of one catalogued variant, with its closed-form costs."""

    key: str
    name: str
    attention: str
    part: str  # self | encoder | decoder | cross
    layer: int
    n_layers: int
    layer_kind: str
    max_positions: int | None
    beyond_max_positions: bool
    spec: PatternSpec
    stats: PatternStats

    def to_dict(self) -> dict[str, Any]:
        """Flat JSON: the stats at top level (kind, nnz, density, score_memory_bytes ...)."""
        head = {k: getattr(self, k) for k in ("key", "name", "attention", "part", "layer", "n_layers",
                                                "layer_kind", "max_positions", "beyond_max_positions")}
        return {**head, **self.stats.to_dict(), "spec": self.spec.to_dict()}


def _variant_and_config(key: str) -> tuple[Any, dict[str, Any]]:
    from explorer import catalog  # imported here: the pure mask functions need no catalog

    return catalog.get_variant(key), catalog.variant_config(key)


def _check_limit(variant: Any, limit: int | None, length: int, allow_beyond: bool) -> bool:
    beyond = limit is not None and length > limit
    if beyond and not allow_beyond:
        raise ExplorerError(f"{variant.name} takes at most {limit:,} tokens (max position embeddings); "
                            f"{length:,} is too long: pick a shorter --seq-len.")
    return beyond


def pattern_for_variant(
    key: str, seq_len: int, layer: int = 0, *, part: str = "auto", global_positions: tuple[int, ...] = (),
    seed: int = 0, dilation: int = 1, dec_len: int | None = None, allow_beyond_max: bool = False,
) -> VariantPattern:
    """The attention pattern of ``layer`` of variant ``key`` for ``seq_len`` tokens.

    ``global_positions``: Longformer's extra global tokens ([CLS] = 0 is always global);
    ``seed``: BigBird's random blocks; ``dec_len``: decoder length of encoder-decoders
    (default ``seq_len``). Longer than the model's max positions raises unless ``allow_beyond_max``.
    """
    variant, cfg = _variant_and_config(key)
    seq_len = _check_len("Sequence length", seq_len)
    dec_len = seq_len if dec_len is None else _check_len("Decoder length", dec_len)
    part = _resolve_part(variant, part)
    n = layer_count(variant, cfg, part)
    if not 0 <= layer < n:
        raise ExplorerError(f"{variant.name} has layers 0..{n - 1} ({part}); layer {layer} does not exist.")
    limit = max_positions(variant, cfg, part)
    length = seq_len if part in ("self", "encoder") else dec_len
    beyond = _check_limit(variant, limit, length, allow_beyond_max)
    if part == "decoder":
        label, spec = "causal", causal(dec_len, head_dim(cfg))
    elif part == "cross":
        label, spec = "cross", cross(dec_len, seq_len, head_dim(cfg))
    else:
        label, spec = self_attention_spec(variant.attention, cfg, layer, seq_len, tuple(global_positions), seed, dilation)
    return VariantPattern(key, variant.name, variant.attention, part, layer, n, label, limit, beyond,
                          spec, pattern_stats(spec))


def variant_cost_curve(
    key: str, lengths: tuple[int, ...] | None = None, layer: int | None = None, *, part: str = "auto",
    global_positions: tuple[int, ...] = (), seed: int = 0, dilation: int = 1,
) -> CostCurve:
    """Cost against length for ``key``: one ``layer``, or the mean over all layers (None)."""
    lengths = lengths or default_lengths()
    variant, cfg = _variant_and_config(key)
    part_ = _resolve_part(variant, part)
    layers = range(layer_count(variant, cfg, part_)) if layer is None else [layer]
    top = max(lengths)  # build at the longest length so every global position is valid
    specs = [pattern_for_variant(key, top, i, part=part, global_positions=global_positions, seed=seed,
                                 dilation=dilation, allow_beyond_max=True).spec for i in layers]
    label = variant.name if part_ in ("self", "encoder") else f"{variant.name} ({part_})"
    return cost_curve(specs, tuple(lengths), label, max_positions(variant, cfg, part_))


KNOWN_ATTENTION = (*_FULL_LABELS, "causal", "sliding-window+global", "block-sparse", "local-global-alternating")
MAX_GLOBALS = 64
MAX_POSITIONS_TEXT = 1_000


def supported_variants() -> dict[str, Any]:
    """Catalogued variants whose attention pattern this module can draw, by key."""
    from explorer import catalog

    return {k: v for k, v in catalog.load_catalog().items() if v.attention in KNOWN_ATTENTION}


def parse_positions(text: str, seq_len: int) -> tuple[int, ...]:
    """Comma/space-separated token positions typed by a user -> sorted unique ints in [0, seq_len).

    Anything else (words, emoji, markup, a novel pasted by mistake) is refused with a message
    that quotes at most a short, plain piece of the input.
    """
    text = text or ""
    if len(text) > MAX_POSITIONS_TEXT:
        raise ExplorerError(f"That is {len(text):,} characters: type at most {MAX_GLOBALS} positions "
                            f"such as 5, 17, 40.")
    pieces = [p for p in text.replace(",", " ").replace(";", " ").split() if p]
    bad = [p for p in pieces if not (p.isascii() and p.isdigit())]
    if bad:
        shown = bad[0] if len(bad[0]) <= 20 else bad[0][:20] + "..."
        raise ExplorerError(f"{shown!r} is not a token position: type whole numbers such as 5, 17, 40.")
    positions = sorted({int(p) for p in pieces})
    if len(positions) > MAX_GLOBALS:
        raise ExplorerError(f"{len(positions)} global positions: pick at most {MAX_GLOBALS}.")
    if positions and positions[-1] >= seq_len:
        raise ExplorerError(f"Position {positions[-1]} is past the end of a {seq_len}-token input "
                            f"(positions are 0..{seq_len - 1}).")
    return tuple(positions)


def table_row(vp: VariantPattern, nnz_counted: int | None = None) -> dict[str, Any]:
    """One row of the comparison table (plain types, readable column names).

    ``nnz_counted``: the count taken on the mask itself, shown next to the closed form.
    """
    s = vp.stats
    counted = {} if nnz_counted is None else {"non-zeros counted on the mask": nnz_counted}
    return {
        "variant": vp.name, "key": vp.key, "part": vp.part, "layer": vp.layer, "layer kind": vp.layer_kind,
        "kind": s.effective_kind, "queries": s.q_len, "keys": s.k_len, "non-zeros": s.nnz, **counted,
        "density": round(s.density, 6), "score memory (MiB, sparse)": round(s.score_memory_bytes / 2**20, 3),
        "score memory (MiB, dense)": round(s.dense_score_memory_bytes / 2**20, 3),
        "GFLOPs": round(s.flops / 1e9, 4), "max positions": vp.max_positions,
        "parameters": s.note,
    }
