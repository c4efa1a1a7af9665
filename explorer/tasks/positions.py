"""One variant's positions on a text: what position alone contributes between every two of its tokens, from the
model's own weights where they are on disk, else from the formula (or, for a learned table, a random one).

The matrix is the same kind of object for every scheme, so two variants line up side by side: the cosine of two
positions' vectors (learned and sinusoidal tables), T5's learned bias for their distance (mean over heads), DeBERTa's
bucket of their distance, or the rotary score of a query and key that are equal before rotation (1 on the
diagonal, depending on the distance only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.architecture import catalog
from explorer.architecture.positions import formulas, tables
from explorer.architecture.positions.scheme import Scheme, scheme_of
from explorer.core import limits
from explorer.core.errors import ExplorerError
from explorer.core.userinput import require_text
from explorer.internals import positions as read
from explorer.internals.located import Located, locate
from explorer.runtime import bundled, loading
from explorer.runtime.placement import RanOn, ran_on
from explorer.runtime.resolve import ModelRef, resolve

__all__ = ["DISTANCES", "TABLE_ROWS", "PositionView", "view"]

TABLE_ROWS = 512  # rows of a learned table shown (BERT's and MiniLM's whole table; GPT-2's first half)
DISTANCES = 128  # T5's learned bias shown to this distance on each side (its last bucket starts at 128)


@dataclass(frozen=True)
class PositionView:
    """A variant's positions on one text. ``pair``: ``(T, T)``, row = query token, column = key token."""

    scheme: Scheme
    tokens: tuple[str, ...]
    pair: np.ndarray
    pair_what: str  # what a cell of ``pair`` is
    source: str  # where the numbers come from, in words
    table: np.ndarray | None = None  # ``(rows, width)`` a learned or fixed table from position 0 on
    random: np.ndarray | None = None  # a random table of the same shape, as training starts
    bias: np.ndarray | None = None  # ``(heads, 2 * DISTANCES + 1)`` T5's learned bias by key - query distance
    checks: tuple[tuple[str, float], ...] = ()  # (what was compared with the model's own module, largest error)
    notes: tuple[str, ...] = ()
    weights: bool = False  # the model's own weights were read
    device: str = "cpu"
    device_name: str = "cpu"
    dtype: str = "float32"


def _tokens(ref: ModelRef, text: str, loaded: loading.LoadedModel | None) -> tuple[str, ...]:
    """The text's tokens as the model reads them (its own tokenizer, else its stand-in vocabulary)."""
    if loaded is not None:
        ids = list(loaded.tokenizer(text)["input_ids"])[: limits.FORWARD_TOKENS]
        return tuple(loaded.tokenizer.decode([i]) for i in ids)
    from explorer.tokenization import split

    name = catalog.get_variant(ref.spec).tokenizer if ref.spec in catalog.keys() else "gpt2"
    return split.tokenize(name, text).pieces[: limits.FORWARD_TOKENS]


def _load(ref: ModelRef, device: str | None, dtype: str | None) -> loading.LoadedModel:
    if ref.spec == bundled.KEY:
        bundled.ensure_converted(ref.models_dir)
    return loading.load_model(ref, ref.task("base"), purpose="the Positions page", device=device, dtype=dtype)


def _absolute(scheme: Scheme, found: Located | None, n: int) -> tuple[np.ndarray, dict[str, object]]:
    """A learned or fixed table's cosine matrix over the text's positions, with the table (and what it is)."""
    extra: dict[str, object] = {}
    if found is not None:
        full, offset = read.table(found), read.table_offset(found)
        extra["source"] = "the model's own position table"
    elif scheme.kind == "sinusoidal":
        rows = (scheme.max_positions or TABLE_ROWS) + scheme.offset
        full, offset = formulas.sinusoid_table(rows, scheme.width, scheme.style or "interleaved",
                                               1 if scheme.offset else None), scheme.offset
        extra["source"] = "the formula (no weights needed)"
    else:
        full = tables.random_table((scheme.max_positions or TABLE_ROWS), scheme.width)
        offset = scheme.offset
        extra["source"] = "a random table, as training starts: no weights on this machine"
    shown = full[offset:offset + TABLE_ROWS]
    extra["table"] = shown
    if scheme.kind == "learned-absolute":
        extra["random"] = tables.random_table(shown.shape[0], shown.shape[1], seed=1)
    if scheme.kind == "sinusoidal" and found is not None:
        formula = formulas.sinusoid_table(full.shape[0], full.shape[1], scheme.style or "interleaved",
                                          1 if offset else None)
        extra["checks"] = (("the module's table against the formula", float(np.abs(full - formula).max())),)
    return tables.cosine_similarity(shown[:n]), extra


def _relative(scheme: Scheme, found: Located | None, n: int) -> tuple[np.ndarray, dict[str, object]]:
    """T5's bias for every (query, key) pair of the text (mean over heads), or each pair's bucket without weights."""
    rel = np.arange(n)[None, :] - np.arange(n)[:, None]  # key - query
    buckets = formulas.t5_bucket(rel, "encoder" in scheme.stacks, scheme.buckets or 32, scheme.max_distance or 128)
    if found is None:
        return buckets.astype(np.float64), {"source": "the bucket formula: no weights on this machine"}
    stack = "encoder" if "encoder" in found.stacks else None
    weights = read.bias_table(found, stack)  # (buckets, heads)
    d = np.arange(-DISTANCES, DISTANCES + 1)
    per_distance = weights[formulas.t5_bucket(d, stack == "encoder", scheme.buckets or 32,
                                              scheme.max_distance or 128)].T
    return weights[buckets].mean(axis=-1), {"source": "the model's own bias table (layer 0)", "bias": per_distance}


def _rotary(scheme: Scheme, found: Located | None, n: int) -> tuple[np.ndarray, dict[str, object]]:
    """The score of two equal vectors rotated to every pair of positions, at layer 0's base."""
    kind = scheme.layer_kinds[0] if scheme.layer_kinds else "all"
    dims = scheme.rotary_dims or scheme.head_width
    rel = np.arange(n)[None, :] - np.arange(n)[:, None]
    formula = formulas.rope_score(rel.ravel(), dims, scheme.base_of(kind)).reshape(n, n)
    if found is None:
        return formula, {"source": "the formula (no weights needed)"}
    cos, sin = read.rotary_cos_sin(found, np.arange(n), kind)
    own = (cos @ cos.T + sin @ sin.T) / dims
    checks = (*read.rotary_check(found, np.arange(n), scheme.layout or "half", dims),
              ("the score from the module against the formula", float(np.abs(own - formula).max())))
    return own, {"source": "the model's own rotary module", "checks": checks}


def _pair(scheme: Scheme, found: Located | None, n: int) -> tuple[np.ndarray, str, dict[str, object]]:
    if scheme.kind in ("learned-absolute", "sinusoidal"):
        return _with(_absolute(scheme, found, n), "cosine of the two positions' vectors")
    if scheme.kind == "relative-buckets":
        return _with(_relative(scheme, found, n), "learned bias for their distance, mean over heads"
                     if found is not None else "bucket of their distance (key - query)")
    if scheme.kind == "disentangled":
        rel = np.arange(n)[:, None] - np.arange(n)[None, :]  # query - key
        bucket = formulas.deberta_bucket(rel, scheme.position_buckets or 0, scheme.max_distance or 512)
        return bucket.astype(np.float64), "relative-position bucket (query - key)", {"source": "the bucket formula"}
    if scheme.kind == "rotary":
        return _with(_rotary(scheme, found, n), "score of two equal vectors rotated to the two positions")
    return np.zeros((n, n)), "no position signal", {"source": "nothing: the model has no positions"}


def _with(found: tuple[np.ndarray, dict[str, object]], what: str) -> tuple[np.ndarray, str, dict[str, object]]:
    return found[0], what, found[1]


def view(ref: ModelRef | str, text: str, *, device: str | None = None, dtype: str | None = None,
         models_dir: str | None = None) -> PositionView:
    """``ref``'s positions on ``text`` (its first :data:`~explorer.core.limits.FORWARD_TOKENS` tokens)."""
    ref = resolve(ref, models_dir) if isinstance(ref, str) else ref
    text = require_text(text, what="text", empty_hint="type a sentence.", max_chars=limits.FORWARD_TEXT_CHARS,
                        limit_note=f"the view reads its first {limits.FORWARD_TOKENS} tokens")
    config = ref.config()
    if not config:
        raise ExplorerError(f"{ref.spec!r} is neither a catalog variant nor a model folder with a config.json: "
                            f"{ref.reason}")
    scheme = scheme_of(config, ref.spec)
    loaded = _load(ref, device, dtype) if ref.ready else None
    found = locate(loaded.model) if loaded is not None else None
    tokens = _tokens(ref, text, loaded)
    pair, what, extra = _pair(scheme, found, len(tokens))
    placed = ran_on(loaded) if loaded is not None else RanOn(device="cpu", device_name="cpu", dtype="float32")
    return PositionView(scheme, tokens, pair, what, str(extra["source"]), _array(extra, "table"),
                        _array(extra, "random"), _array(extra, "bias"), tuple(extra.get("checks", ())),  # type: ignore[arg-type]
                        () if ref.ready else (f"No weights on this machine: {ref.reason}",), found is not None,
                        **placed)


def _array(extra: dict[str, object], name: str) -> np.ndarray | None:
    value = extra.get(name)
    return value if isinstance(value, np.ndarray) else None
