"""Real attention extraction: a loaded model and its tokenizer + a text -> :class:`AttentionMaps`.

:func:`extract_attention` runs one forward pass with ``output_attentions=True`` and returns every
matrix as the full square ``(layers, H, L, L)`` (sparse outputs mapped by :mod:`.sparse`), with
:class:`~explorer.notices.Notice` values saying what the user should know (truncation, formats,
random weights). :func:`extract` loads a catalog key or a directory first (eager kernel).

>>> check_text("   ")
Traceback (most recent call last):
...
explorer.errors.ExplorerError: The text is empty: type a sentence to see its attention.
>>> class Config: model_type, max_position_embeddings, pad_token_id = "roberta", 514, 1
>>> class Model: config = Config()
>>> class Tokenizer: model_max_length = int(1e30)  # what a tokenizer without a limit reports
>>> token_limit(Model(), Tokenizer()), token_limit(Model(), Tokenizer(), max_tokens=64)
(512, 64)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from explorer.attention.maps import MAX_TOKENS, AttentionMaps, viewer_limit
from explorer.attention.sparse import bigbird_runner, longformer_stack, stack_layers
from explorer.errors import ExplorerError
from explorer.modeltypes import max_input_tokens
from explorer.notices import Notice
from explorer.userinput import require_text

__all__ = ["MAX_TEXT_CHARS", "check_text", "extract", "extract_attention", "n_maps", "token_limit", "viewer_tokens"]

MAX_TEXT_CHARS = 200_000  # beyond this even tokenizing for the truncation notice is pointless


def check_text(text: object, what: str = "text") -> str:
    """Return ``text`` if it has something to attend over, else raise a helpful ExplorerError."""
    return require_text(text, what=what, empty_hint="type a sentence to see its attention.",
                        max_chars=MAX_TEXT_CHARS, limit_note=f"only the first {MAX_TOKENS} tokens are shown anyway")


def n_maps(config: Any) -> int | None:
    """Attention matrices of one pass: layers x heads (encoder-decoders: encoder, decoder and cross)."""
    layers = getattr(config, "num_hidden_layers", None) or getattr(config, "num_layers", None)
    heads = getattr(config, "num_attention_heads", None) or getattr(config, "num_heads", None)
    if not isinstance(layers, int) or not isinstance(heads, int):
        return None
    return layers * heads * (3 if getattr(config, "is_encoder_decoder", False) else 1)


def viewer_tokens(model: Any, tokenizer: Any, max_tokens: int = MAX_TOKENS) -> int:
    """:func:`token_limit` within what the viewer holds for this model (512 tokens; up to 1,024 for
    models with few heads, e.g. Gemma 3 270M: 724, past its 512-token local window)."""
    return min(token_limit(model, tokenizer, max_tokens), viewer_limit(n_maps(getattr(model, "config", None))))


def token_limit(model: Any, tokenizer: Any, max_tokens: int = MAX_TOKENS) -> int:
    """How many tokens (special ones included) this model accepts, capped at ``max_tokens``.

    The smallest of ``max_tokens``, the tokenizer's ``model_max_length`` when sane (a missing one
    is ~1e30) and the config's absolute positions (:func:`explorer.modeltypes.max_input_tokens`:
    RoBERTa-style offsets subtracted; relative-position models such as T5 have no such limit).
    The viewer's memory cap comes on top (:func:`viewer_tokens`).
    """
    if int(max_tokens) < 2:
        raise ExplorerError(f"max_tokens must be at least 2, got {max_tokens}.")
    cfg = getattr(model, "config", None)
    limits = [int(max_tokens)]
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
        limits.append(tok_max)
    pos = max_input_tokens(cfg) if cfg is not None else None
    if pos is not None and pos > 0:
        limits.append(pos)
    return max(2, min(limits))


def _family(model: Any) -> str:
    """"encoder-decoder" from the config; "decoder"/"encoder" is decided from the mask later."""
    return "encoder-decoder" if getattr(model.config, "is_encoder_decoder", False) else "encoder"


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


def _run(model: Any, inputs: dict[str, Any]) -> Any:
    """One forward pass with attention outputs; model failures become ExplorerErrors."""
    import inspect

    import torch

    from explorer.offload import input_device

    device = input_device(model)  # the CPU when accelerate streams even the first layer from disk (meta)
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
        model, fmt = bigbird_runner(model, length)
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
        return longformer_stack(out, runner, glob), {}
    if _family(runner) != "encoder-decoder":
        return stack_layers(out.attentions, runner, "attention", (len(ids), len(ids))), {}
    dec_ids = inputs["decoder_input_ids"][0].tolist()
    maps = {
        "decoder_tokens": tuple(tokenizer.convert_ids_to_tokens(dec_ids)),
        "decoder_attentions": stack_layers(out.decoder_attentions, runner, "decoder attention",
                                           (len(dec_ids), len(dec_ids))),
        "cross_attentions": stack_layers(out.cross_attentions, runner, "cross-attention",
                                         (len(dec_ids), len(ids))),
    }
    return stack_layers(out.encoder_attentions, runner, "encoder attention", (len(ids), len(ids))), maps


def extract_attention(model: Any, tokenizer: Any, text: str, *, target: str | None = None,
                      max_tokens: int = MAX_TOKENS, global_positions: tuple[int, ...] = (0,),
                      name: str | None = None, untrained: bool = False) -> AttentionMaps:
    """Run ``text`` through ``model`` once and return every attention matrix as a full square.

    ``text`` is truncated to :func:`token_limit` tokens (a notice says so). Encoder-decoders
    are teacher-forced with ``target`` (default: the text itself) to get decoder and cross
    attention. ``global_positions``: Longformer tokens given global attention ([CLS] by default);
    positions past the end of the text are dropped (a notice says so).
    """
    text = check_text(text)
    if target is not None and not target.strip():
        target = None
    limit = viewer_tokens(model, tokenizer, max_tokens)
    runner, inputs, n_input, fmt = _prepare(model, tokenizer, text, target, limit, global_positions)
    ids = inputs["input_ids"][0].tolist()
    out = _run(runner, inputs)
    glob = tuple(sorted({p for p in global_positions if 0 <= p < len(ids)})) if fmt == "longformer-window" else ()
    att, maps = _collect(out, runner, fmt, inputs, tokenizer, glob)
    family = _family(runner) if maps else ("decoder" if _is_causal(att) else "encoder")
    dropped = sorted({p for p in global_positions if p >= len(ids)}) if fmt == "longformer-window" else []
    notices = _notices(n_input, len(ids), limit, fmt, untrained) + _row_sum_notice(att, fmt)
    return AttentionMaps(
        model=name or getattr(model.config, "name_or_path", "") or type(model).__name__,
        tokens=tuple(tokenizer.convert_ids_to_tokens(ids)), attentions=att, family=family,
        source_format=fmt, n_input_tokens=n_input, untrained=untrained, global_positions=glob,
        notices=notices + _dropped_notice(dropped, len(ids)), **maps)


def _row_sum_notice(att: np.ndarray, fmt: str) -> tuple[Notice, ...]:
    """Say so when the reported rows do not sum to 1 (a model-side fact worth knowing)."""
    sums = att.sum(axis=-1, dtype=np.float64)  # (layers, H, L)
    sums = sums[sums > 0]  # rows a model leaves empty (none expected) are not "wrong"
    if sums.size == 0 or float(np.abs(sums - 1.0).max()) <= 1e-3:
        return ()
    why = (" BigBird in eval mode points its random blocks at the first (global) block, and the "
           "weight of those duplicate keys is missing from the matrix it reports."
           if fmt == "bigbird-block-sparse" else "")
    return (Notice("info", f"Attention rows sum to {sums.min():.3f} to {sums.max():.3f} instead of 1.{why}"),)


def _dropped_notice(dropped: list[int], n_tokens: int) -> tuple[Notice, ...]:
    if not dropped:
        return ()
    return (Notice("dropped", f"Global token position(s) {dropped} are past the end of this "
                              f"{n_tokens}-token text (0..{n_tokens - 1}): ignored."),)


def _notices(n_input: int, n_kept: int, limit: int, fmt: str, untrained: bool) -> tuple[Notice, ...]:
    """What the page and the CLI show above the maps, each with its kind."""
    out = []
    if n_input > n_kept:
        out.append(Notice("truncated", f"The text has {n_input:,} tokens; only the first {n_kept} are shown "
                                       f"(limit {limit}: the model's maximum or what the viewer holds for it)."))
    if fmt == "longformer-window":
        out.append(Notice("info", "Longformer's windowed output was mapped back onto the full matrix: cells "
                                  "outside the sliding window are exactly 0, except to and from the global tokens."))
    elif fmt == "bigbird-block-sparse":
        out.append(Notice("info", "BigBird block-sparse: blocks outside the window, global and random blocks are 0."))
    elif fmt == "bigbird-full":
        out.append(Notice("fallback", "BigBird used full attention: this input is too short for its "
                                      "block-sparse pattern."))
    if untrained:
        out.append(Notice("untrained", "Untrained (random weights): these patterns mean nothing about language."))
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
