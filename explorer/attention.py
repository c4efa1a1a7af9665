"""Real attention maps: extraction, mapping sparse outputs onto the square, rollout, compaction.

Everything here works on any loaded model (``model``, ``tokenizer``) and returns numpy arrays:

- :func:`extract_attention` runs one forward pass with ``output_attentions=True`` and returns an
  :class:`AttentionMaps` whose ``attentions`` is always the full square ``(layers, H, L, L)``:
  Longformer's sliding-window rows ``(B, H, L, n_global + 2w + 1)`` and its separate global rows
  are scattered back onto it (:func:`longformer_to_square`), and BigBird's block-sparse output,
  padded to a multiple of ``block_size``, is cropped back to the text's tokens.
- Views: :func:`head_average`, :func:`rollout` (Abnar & Zuidema 2020), :func:`select_view`.
- Keeping the browser light: :func:`prune_links` (strongest keys per query), :func:`downsample`
  (block means for the model-view grid) and :func:`quantize_uint8`.

Attention weights only exist with the ``eager`` kernel in transformers 5: ``sdpa`` silently
returns an empty tuple. A model like that gets a clear :class:`ExplorerError`, not an empty plot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer.errors import ExplorerError
from explorer.userinput import require_text

MAX_TOKENS = 512  # viewer limit: 12 layers x 12 heads x 512^2 float32 is already 150 MB
MAX_TEXT_CHARS = 200_000  # beyond this even tokenizing for the truncation notice is pointless
VIEWS = ("head", "head-average", "rollout", "decoder", "cross")
ROBERTA_LIKE = ("roberta", "longformer", "xlm-roberta", "camembert", "bigbird_pegasus")


@dataclass(frozen=True, eq=False)
class AttentionMaps:
    """Attention weights of one text through one model, every matrix square and unpadded.

    ``attentions``: ``(layers, H, L, L)`` float32, row = query token, column = key token; it is
    the encoder's self-attention for encoder-decoders. ``decoder_attentions``: ``(Ld, H, T, T)``
    and ``cross_attentions``: ``(Ld, H, T, L)`` for encoder-decoders only (else ``None``).
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
    notices: tuple[str, ...] = field(default_factory=tuple)

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
        """Shapes, tokens and notices (JSON-able; the tensors themselves are exported separately)."""
        d: dict[str, Any] = {
            "model": self.model, "family": self.family, "source_format": self.source_format,
            "layers": self.n_layers, "heads": self.n_heads, "tokens": list(self.tokens),
            "n_tokens": len(self.tokens), "n_input_tokens": self.n_input_tokens,
            "truncated": self.truncated, "shape": list(self.attentions.shape),
            "untrained": self.untrained, "global_positions": list(self.global_positions),
            "notices": list(self.notices),
        }
        if self.cross_attentions is not None and self.decoder_attentions is not None:
            d["decoder_tokens"] = list(self.decoder_tokens)
            d["decoder_shape"] = list(self.decoder_attentions.shape)
            d["cross_shape"] = list(self.cross_attentions.shape)
        return d


# --------------------------------------------------------------------------- input checks


def check_text(text: object, what: str = "text") -> str:
    """Return ``text`` if it has something to attend over, else raise a helpful ExplorerError."""
    return require_text(text, what=what, empty_hint="type a sentence to see its attention.",
                        max_chars=MAX_TEXT_CHARS, limit_note=f"only the first {MAX_TOKENS} tokens are shown anyway")


def token_limit(model: Any, tokenizer: Any, max_tokens: int = MAX_TOKENS) -> int:
    """How many tokens (special ones included) this model accepts, capped at ``max_tokens``.

    The tokenizer's ``model_max_length`` is trusted when sane (a missing one is ~1e30);
    otherwise ``max_position_embeddings``, minus the 2-slot offset RoBERTa-style models keep
    for their padding index. Relative-position models (T5) only get the viewer's cap.
    """
    if int(max_tokens) < 2:
        raise ExplorerError(f"max_tokens must be at least 2, got {max_tokens}.")
    limits = [int(max_tokens)]
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
        limits.append(tok_max)
    else:
        cfg = getattr(model, "config", None)
        pos = getattr(cfg, "max_position_embeddings", None)
        if isinstance(pos, int) and pos > 0:
            offset = 2 if getattr(cfg, "model_type", "") in ROBERTA_LIKE else 0
            limits.append(pos - offset)
    return max(2, min(limits))


# --------------------------------------------------------------------------- sparse -> square


def longformer_to_square(local: np.ndarray, global_attn: np.ndarray | None,
                         global_idx: tuple[int, ...]) -> np.ndarray:
    """Scatter one Longformer layer's output back onto the full ``(H, L, L)`` matrix.

    ``local``: ``(H, L, n_global + 2w + 1)``; column ``g < n_global`` is the weight on global
    token ``global_idx[g]``, column ``n_global + j`` the weight on key ``i - w + j`` (keys outside
    the text or global ones hold 0 there: their weight lives in the first columns).
    ``global_attn``: ``(H, Lp, n_global)`` (Lp = length padded to the window), where
    ``[h, k, g]`` is what global token ``g`` gives key ``k``; Longformer zeroes those rows in
    ``local`` because they were computed separately.
    """
    n_heads, length, width = local.shape
    n_global = len(global_idx)
    w = (width - n_global - 1) // 2
    if w < 0 or width != n_global + 2 * w + 1:
        raise ExplorerError(f"Unexpected Longformer attention width {width} for {n_global} global "
                            "tokens (expected n_global + 2 * window + 1): this checkpoint is not supported.")
    out = np.zeros((n_heads, length, length), dtype=np.float32)
    rows = np.arange(length)
    for j in range(2 * w + 1):  # one diagonal of the band per window slot
        keys = rows - w + j
        ok = (keys >= 0) & (keys < length)
        out[:, rows[ok], keys[ok]] = local[:, rows[ok], n_global + j]
    if n_global:
        idx = np.asarray(global_idx)
        out[:, :, idx] = local[:, :, :n_global]  # everyone -> global tokens
        if global_attn is not None:  # global tokens -> everyone (their own rows)
            out[:, idx, :] = np.transpose(global_attn[:, :length, :], (0, 2, 1))
    return out


# --------------------------------------------------------------------------- extraction


def _family(model: Any) -> str:
    """"encoder-decoder" from the config; "decoder"/"encoder" is decided from the mask later."""
    return "encoder-decoder" if getattr(model.config, "is_encoder_decoder", False) else "encoder"


def _bigbird_runner(model: Any, length: int) -> tuple[Any, str]:
    """A BigBird whose attention type is fixed *before* the forward pass, sharing ``model``'s weights.

    BigBird switches itself to full attention during a forward on short inputs
    (``L <= (5 + 2 * num_random_blocks) * block_size``) and from then on returns ``()`` for
    attentions, because the output hooks sit on the modules it replaced. We never run the
    shared cached model: a sibling is built on the meta device with the wanted type and takes
    the same tensors (``assign=True``: no copy), so the cached instance is never mutated.
    """
    import torch

    cfg = model.config
    limit = (5 + 2 * int(cfg.num_random_blocks)) * int(cfg.block_size)
    wanted = "original_full" if length <= limit or cfg.attention_type == "original_full" else "block_sparse"
    new_cfg = type(cfg).from_dict(cfg.to_dict())
    new_cfg.attention_type = wanted
    new_cfg._attn_implementation = "eager"
    with torch.device("meta"):
        sibling = type(model)(new_cfg)
    sibling.load_state_dict(model.state_dict(), assign=True, strict=True)
    for name, buf in model.named_buffers():  # non-persistent buffers are not in the state dict
        owner, _, attr = name.rpartition(".")
        setattr(sibling.get_submodule(owner) if owner else sibling, attr, buf)
    return sibling.eval(), ("bigbird-full" if wanted == "original_full" else "bigbird-block-sparse")


def _encode(tokenizer: Any, text: str, limit: int) -> tuple[dict[str, Any], int]:
    """Tokenize with truncation to ``limit`` tokens; also return the untruncated token count."""
    n_input = len(tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])
    enc = tokenizer(text, return_tensors="pt", truncation=True, max_length=limit)
    ids = enc["input_ids"][0].tolist()
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    if not [i for i in ids if i not in special]:
        raise ExplorerError("The text gives no tokens besides special ones for this tokenizer: "
                            "type some words.")
    return dict(enc), n_input


def _decoder_inputs(model: Any, tokenizer: Any, target: str, limit: int) -> Any:
    """Teacher-forced decoder input ``(1, T)``: the start token then ``target``'s tokens shifted right."""
    import torch

    ids = tokenizer(target, add_special_tokens=True, truncation=True, max_length=limit)["input_ids"]
    start = getattr(model.config, "decoder_start_token_id", None)
    if start is None:
        start = model.config.pad_token_id if model.config.pad_token_id is not None else 0
    return torch.tensor([[int(start), *ids[:-1]]], dtype=torch.long)


def _no_attention_error(model: Any, what: str) -> ExplorerError:
    impl = getattr(model.config, "_attn_implementation", None) or "unknown"
    return ExplorerError(
        f"{type(model).__name__} returned no {what} weights (attention kernel: {impl}). Only the "
        "'eager' kernel exposes them: load the model with attn_implementation='eager' "
        "(models without softmax attention have none to show).")


def _stack(layers: Any, model: Any, what: str, shape: tuple[int, int]) -> np.ndarray:
    """``tuple[layers]`` of ``(1, H, Lq', Lk')`` tensors -> ``(layers, H, Lq, Lk)`` float32, cropped."""
    if not layers:  # sdpa / flash kernels give () silently
        raise _no_attention_error(model, what)
    mats = []
    for a in layers:
        a = a[0].float().cpu().numpy()  # (H, Lq', Lk'): first (only) batch item
        if a.ndim != 3 or a.shape[1] < shape[0] or a.shape[2] < shape[1]:
            raise ExplorerError(f"{what} weights of shape {tuple(a.shape)} do not fit {shape[0]}x{shape[1]} "
                                "tokens: this model's attention output is not supported.")
        mats.append(a[:, : shape[0], : shape[1]])  # models that pad internally: crop the padding
    return np.stack(mats).astype(np.float32, copy=False)


def _longformer_stack(out: Any, model: Any, global_idx: tuple[int, ...]) -> np.ndarray:
    """Every Longformer layer mapped onto ``(H, L, L)``, stacked to ``(layers, H, L, L)``."""
    if not out.attentions:
        raise _no_attention_error(model, "attention")
    glob = out.global_attentions or (None,) * len(out.attentions)
    mats = [longformer_to_square(loc[0].float().cpu().numpy(),
                                 None if g is None else g[0].float().cpu().numpy(), global_idx)
            for loc, g in zip(out.attentions, glob, strict=True)]
    return np.stack(mats)


def _run(model: Any, inputs: dict[str, Any]) -> Any:
    """One forward pass with attention outputs; model failures become ExplorerErrors."""
    import inspect

    import torch

    device = next(model.parameters()).device
    accepted = inspect.signature(model.forward).parameters
    # a tokenizer may return fields its model does not take (token_type_ids for a BERT vocab on T5)
    inputs = {k: v.to(device) for k, v in inputs.items() if k in accepted}
    try:
        with torch.inference_mode():
            return model(**inputs, output_attentions=True, return_dict=True)
    except (RuntimeError, ValueError, IndexError, TypeError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ExplorerError(f"{type(model).__name__} could not run on this text: {first[:300]}") from err


def _prepare(model: Any, tokenizer: Any, text: str, target: str | None, limit: int,
             global_positions: tuple[int, ...]) -> tuple[Any, dict[str, Any], int, str]:
    """Model to run, its inputs, the untruncated token count and the output format."""
    inputs, n_input = _encode(tokenizer, text, limit)
    length = int(inputs["input_ids"].shape[1])
    model_type = getattr(model.config, "model_type", "")
    fmt = "square"
    if model_type == "longformer":
        import torch

        glob = torch.zeros_like(inputs["input_ids"])
        glob[0, [p for p in global_positions if 0 <= p < length]] = 1
        inputs["global_attention_mask"] = glob
        fmt = "longformer-window"
    elif model_type == "big_bird":
        model, fmt = _bigbird_runner(model, length)
    if _family(model) == "encoder-decoder":
        inputs["decoder_input_ids"] = _decoder_inputs(model, tokenizer, target or text, limit)
    return model, inputs, n_input, fmt


def _is_causal(att: np.ndarray) -> bool:
    """True when no query looks at a later key in any head of the first layer (decoder-only)."""
    return att.shape[-1] > 2 and bool(np.all(np.triu(att[0], k=1) <= 1e-7))



def _collect(out: Any, runner: Any, fmt: str, inputs: dict[str, Any], tokenizer: Any,
             glob: tuple[int, ...]) -> tuple[np.ndarray, dict[str, Any]]:
    """Self-attention ``(layers, H, L, L)`` plus, for encoder-decoders, decoder and cross maps."""
    ids = inputs["input_ids"][0].tolist()
    if fmt == "longformer-window":
        return _longformer_stack(out, runner, glob), {}
    if _family(runner) != "encoder-decoder":
        return _stack(out.attentions, runner, "attention", (len(ids), len(ids))), {}
    dec_ids = inputs["decoder_input_ids"][0].tolist()
    maps = {
        "decoder_tokens": tuple(tokenizer.convert_ids_to_tokens(dec_ids)),
        "decoder_attentions": _stack(out.decoder_attentions, runner, "decoder attention",
                                     (len(dec_ids), len(dec_ids))),
        "cross_attentions": _stack(out.cross_attentions, runner, "cross-attention", (len(dec_ids), len(ids))),
    }
    return _stack(out.encoder_attentions, runner, "encoder attention", (len(ids), len(ids))), maps

def extract_attention(model: Any, tokenizer: Any, text: str, *, target: str | None = None,
                      max_tokens: int = MAX_TOKENS, global_positions: tuple[int, ...] = (0,),
                      name: str | None = None, untrained: bool = False) -> AttentionMaps:
    """Run ``text`` through ``model`` once and return every attention matrix as a full square.

    ``text`` is truncated to :func:`token_limit` tokens (a notice says so). Encoder-decoders
    are teacher-forced with ``target`` (default: the text itself) to get decoder and cross
    attention. ``global_positions``: Longformer tokens given global attention ([CLS] by default).
    """
    text = check_text(text)
    if target is not None and not target.strip():
        target = None
    limit = token_limit(model, tokenizer, max_tokens)
    runner, inputs, n_input, fmt = _prepare(model, tokenizer, text, target, limit, global_positions)
    ids = inputs["input_ids"][0].tolist()
    out = _run(runner, inputs)
    glob = tuple(sorted({p for p in global_positions if 0 <= p < len(ids)})) if fmt == "longformer-window" else ()
    att, maps = _collect(out, runner, fmt, inputs, tokenizer, glob)
    family = _family(runner) if maps else ("decoder" if _is_causal(att) else "encoder")
    return AttentionMaps(
        model=name or getattr(model.config, "name_or_path", "") or type(model).__name__,
        tokens=tuple(tokenizer.convert_ids_to_tokens(ids)), attentions=att, family=family,
        source_format=fmt, n_input_tokens=n_input, untrained=untrained, global_positions=glob,
        notices=_notices(n_input, len(ids), limit, fmt, untrained) + _row_sum_notice(att, fmt), **maps)


def _row_sum_notice(att: np.ndarray, fmt: str) -> tuple[str, ...]:
    """Say so when the reported rows do not sum to 1 (a model-side fact worth knowing)."""
    sums = att.sum(axis=-1, dtype=np.float64)  # (layers, H, L)
    sums = sums[sums > 0]  # rows a model leaves empty (none expected) are not "wrong"
    if sums.size == 0 or float(np.abs(sums - 1.0).max()) <= 1e-3:
        return ()
    why = (" BigBird in eval mode points its random blocks at the first (global) block, and the "
           "weight of those duplicate keys is missing from the matrix it reports."
           if fmt == "bigbird-block-sparse" else "")
    return (f"Attention rows sum to {sums.min():.3f} to {sums.max():.3f} instead of 1.{why}",)


def _notices(n_input: int, n_kept: int, limit: int, fmt: str, untrained: bool) -> tuple[str, ...]:
    """One-line notices the page and the CLI show above the maps."""
    out = []
    if n_input > n_kept:
        out.append(f"The text has {n_input:,} tokens; only the first {n_kept} are shown "
                   f"(limit {limit}: the model's maximum or the viewer's {MAX_TOKENS}).")
    if fmt == "longformer-window":
        out.append("Longformer's windowed output was mapped back onto the full matrix: cells outside "
                   "the sliding window are exactly 0, except to and from the global tokens.")
    elif fmt == "bigbird-block-sparse":
        out.append("BigBird block-sparse: blocks outside the window, global and random blocks are 0.")
    elif fmt == "bigbird-full":
        out.append("BigBird used full attention: this input is too short for its block-sparse pattern.")
    if untrained:
        out.append("Untrained (random weights): these patterns mean nothing about language.")
    return tuple(out)


def extract(key_or_path: str, text: str, *, target: str | None = None, max_tokens: int = MAX_TOKENS,
            random_weights: bool = False, models_dir: str | None = None,
            global_positions: tuple[int, ...] = (0,)) -> AttentionMaps:
    """Load ``key_or_path`` with the eager kernel (see explorer.loading) and extract its attention."""
    from explorer.loading import load_model

    text = check_text(text)  # before loading: bad input should not cost a model load
    lm = load_model(key_or_path, "base", attn_implementation="eager",
                    random_weights=random_weights, models_dir=models_dir)
    return extract_attention(lm.model, lm.tokenizer, text, target=target, max_tokens=max_tokens,
                             global_positions=global_positions, name=lm.key, untrained=lm.untrained)


def parse_positions(text: str | None) -> tuple[int, ...]:
    """``"5, 17"`` -> ``(5, 17)``: extra Longformer global tokens typed by a user."""
    parts = [p.strip() for p in (text or "").replace(";", ",").split(",") if p.strip()]
    if not all(p.isdigit() for p in parts):
        raise ExplorerError(f"Global tokens are token positions separated by commas (e.g. 5, 17), got {text!r}.")
    return tuple(sorted({int(p) for p in parts}))


# --------------------------------------------------------------------------- views


def head_average(att: np.ndarray) -> np.ndarray:
    """Mean over heads: ``(layers, H, Lq, Lk)`` -> ``(layers, Lq, Lk)``; rows still sum to 1."""
    return att.mean(axis=1, dtype=np.float64).astype(np.float32)


def rollout(att: np.ndarray, residual: float = 0.5) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020): how much each input token flows into each position.

    ``att``: ``(layers, H, L, L)`` -> ``(layers, L, L)``; entry ``[l, i, j]`` is the share of
    token ``j`` in position ``i`` after layer ``l``. Each layer's head average is mixed with the
    identity, ``residual * I + (1 - residual) * A``, because the residual connection carries the
    token itself past the attention; rows are re-normalised and the layers multiplied in order.
    """
    if att.ndim != 4 or att.shape[-1] != att.shape[-2]:
        raise ExplorerError(f"Rollout needs square self-attention (layers, H, L, L), got {att.shape}.")
    if not 0.0 <= residual < 1.0:
        raise ExplorerError(f"The residual weight must be in [0, 1), got {residual}.")
    eye = np.eye(att.shape[-1])
    flow = np.empty(att.shape[:1] + att.shape[2:], dtype=np.float32)
    acc = eye
    for layer, mean in enumerate(att.mean(axis=1, dtype=np.float64)):  # (L, L) per layer
        mixed = residual * eye + (1.0 - residual) * mean
        mixed /= mixed.sum(axis=-1, keepdims=True)
        acc = mixed @ acc  # later layers act on what earlier ones already mixed
        flow[layer] = acc
    return flow


@dataclass(frozen=True, eq=False)
class ViewMatrix:
    """One 2-D matrix to draw or export: ``matrix`` ``(Lq, Lk)`` float32 with its token labels."""

    view: str
    title: str
    matrix: np.ndarray
    row_tokens: tuple[str, ...]  # queries
    col_tokens: tuple[str, ...]  # keys
    row_offset: int = 0  # position of the first row / column in the full text (token zoom)
    col_offset: int = 0

    def to_dict(self, decimals: int = 4) -> dict[str, Any]:
        return {"view": self.view, "title": self.title, "shape": list(self.matrix.shape),
                "row_tokens": list(self.row_tokens), "col_tokens": list(self.col_tokens),
                "row_offset": self.row_offset, "col_offset": self.col_offset,
                "matrix": np.round(self.matrix.astype(np.float64), decimals).tolist()}


def available_views(maps: AttentionMaps) -> tuple[str, ...]:
    """Views that make sense for this model (decoder and cross only for encoder-decoders)."""
    base = ("head", "head-average", "rollout")
    return base + ("decoder", "cross") if maps.cross_attentions is not None else base


def _check_index(value: int, size: int, what: str) -> int:
    if not isinstance(value, (int, np.integer)) or not 0 <= int(value) < size:
        raise ExplorerError(f"{what} {value} does not exist: pick 0 to {size - 1}.")
    return int(value)


def _stack_for(maps: AttentionMaps, view: str) -> np.ndarray:
    """The ``(layers, H, Lq, Lk)`` stack a view reads from."""
    if view in ("decoder", "cross"):
        stack = maps.decoder_attentions if view == "decoder" else maps.cross_attentions
        if stack is None:
            raise ExplorerError(f"The '{view}' view needs an encoder-decoder model (T5, BART); "
                                f"{maps.model} has only self-attention.")
        return stack
    if view not in VIEWS:
        raise ExplorerError(f"Unknown view '{view}': choose one of {', '.join(VIEWS)}.")
    return maps.attentions


def clamp_range(token_range: tuple[int, int] | None, length: int) -> tuple[int, int]:
    """A valid ``[start, end)`` token window (the whole text when ``None``)."""
    if token_range is None:
        return 0, length
    start, end = max(0, int(token_range[0])), min(length, int(token_range[1]))
    if end - start < 1:
        raise ExplorerError(f"The token range {token_range} is empty: pick start < end within 0..{length}.")
    return start, end


def select_view(maps: AttentionMaps, view: str, layer: int, head: int = 0,
                token_range: tuple[int, int] | None = None) -> ViewMatrix:
    """The ``(Lq, Lk)`` matrix behind one view, zoomed to ``token_range`` of the text tokens.

    head: ``attentions[layer, head]``; head-average and rollout ignore ``head``; decoder:
    ``decoder_attentions[layer, head]`` ``(T, T)``; cross: ``cross_attentions[layer, head]`` ``(T, L)``.
    """
    stack = _stack_for(maps, view)
    layer = _check_index(layer, stack.shape[0], "Layer")
    if view in ("head", "decoder", "cross"):
        head = _check_index(head, stack.shape[1], "Head")
        mat, what = stack[layer, head], f"layer {layer}, head {head}"
    elif view == "head-average":
        mat, what = stack[layer].mean(axis=0), f"layer {layer}, mean of {stack.shape[1]} heads"
    else:
        mat, what = rollout(stack)[layer], f"rollout through layer {layer}"
    rows = maps.decoder_tokens if view in ("decoder", "cross") else maps.tokens
    cols = maps.decoder_tokens if view == "decoder" else maps.tokens
    r0, r1 = (0, len(rows)) if view in ("decoder", "cross") else clamp_range(token_range, len(rows))
    c0, c1 = (0, len(cols)) if view == "decoder" else clamp_range(token_range, len(cols))
    label = {"head": "Self-attention", "head-average": "Head average", "rollout": "Attention rollout",
             "decoder": "Decoder self-attention", "cross": "Cross-attention"}[view]
    return ViewMatrix(view=view, title=f"{label}: {what}",
                      matrix=np.ascontiguousarray(mat[r0:r1, c0:c1], dtype=np.float32),
                      row_tokens=tuple(rows[r0:r1]), col_tokens=tuple(cols[c0:c1]),
                      row_offset=r0, col_offset=c0)


# --------------------------------------------------------------------------- compaction


def prune_links(matrix: np.ndarray, top_k: int = 3, min_weight: float = 0.0) -> np.ndarray:
    """The ``top_k`` strongest keys of every query, as rows ``(query, key, weight)``.

    ``matrix``: ``(Lq, Lk)`` -> ``(n, 3)`` float32 sorted by query then descending weight, with
    ``n <= Lq * top_k``; links under ``min_weight`` are dropped. Keeping a few per token (not a
    global threshold) means every token keeps its own strongest link.
    """
    if matrix.ndim != 2:
        raise ExplorerError(f"Links need a 2-D matrix, got shape {matrix.shape}.")
    k = max(1, min(int(top_k), matrix.shape[1]))
    keys = np.argpartition(-matrix, k - 1, axis=1)[:, :k]  # (Lq, k), unordered
    weights = np.take_along_axis(matrix, keys, axis=1)
    order = np.argsort(-weights, axis=1, kind="stable")
    keys, weights = np.take_along_axis(keys, order, 1), np.take_along_axis(weights, order, 1)
    queries = np.repeat(np.arange(matrix.shape[0]), k)
    links = np.stack([queries, keys.ravel(), weights.ravel()], axis=1).astype(np.float32)
    return links[links[:, 2] >= min_weight]


def bin_edges(length: int, size: int) -> np.ndarray:
    """``min(length, size) + 1`` integer edges splitting ``length`` tokens into near-equal bins."""
    n = max(1, min(int(length), int(size)))
    return np.linspace(0, length, n + 1).round().astype(np.int64)


def downsample(att: np.ndarray, size: int) -> np.ndarray:
    """Block means over the last two axes so neither exceeds ``size``: ``(..., Lq, Lk)`` -> ``(..., q, k)``.

    Means (not sub-sampling, which could skip the one strong cell) keep every token's weight
    visible, and a cell's value stays on the scale of the full matrix's cells.
    """
    rows, cols = bin_edges(att.shape[-2], size), bin_edges(att.shape[-1], size)
    summed = np.add.reduceat(np.add.reduceat(att, rows[:-1], axis=-2), cols[:-1], axis=-1)
    area = np.outer(np.diff(rows), np.diff(cols))  # (q, k) cells per block
    return (summed / area).astype(np.float32)


def quantize_uint8(att: np.ndarray, vmax: float | None = None) -> tuple[np.ndarray, float]:
    """Map ``[0, vmax]`` to 0..255 (1 byte per cell instead of 4); returns the codes and ``vmax``."""
    top = float(np.max(att)) if vmax is None else float(vmax)
    top = top if top > 0 else 1.0
    codes = np.clip(np.rint(att * (255.0 / top)), 0, 255).astype(np.uint8)
    return codes, top


def npy_bytes(array: np.ndarray) -> bytes:
    """The array as a ``.npy`` file (what the page's download button and the CLI write)."""
    import io

    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()
