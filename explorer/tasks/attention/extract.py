"""Real attention extraction: a loaded model and its tokenizer + a text -> :class:`AttentionMaps`.

:func:`extract_attention` runs one forward pass with ``output_attentions=True`` and returns every
matrix as the full square ``(layers, H, L, L)`` (sparse outputs mapped by :mod:`.sparse`), with
:class:`~explorer.core.notices.Notice` values saying what the user should know (truncation, formats,
random weights). :func:`extract` loads a catalog key or a directory first (eager kernel).

>>> check_text("   ")
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: The text is empty: type a sentence to see its attention.
>>> class Config: model_type, max_position_embeddings, pad_token_id = "roberta", 514, 1
>>> class Model: config = Config()
>>> class Tokenizer: model_max_length = int(1e30)  # what a tokenizer without a limit reports
>>> token_limit(Model(), Tokenizer()), token_limit(Model(), Tokenizer(), max_tokens=64)
(512, 64)
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from explorer.architecture.modeltypes import is_encoder_decoder, max_input_tokens, num_heads, num_layers
from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.limits import ATTENTION_TEXT_CHARS
from explorer.core.notices import Notice
from explorer.core.userinput import require_text
from explorer.runtime import capacity
from explorer.runtime.resolve import ModelRef
from explorer.tasks.attention.blocks import block_for, block_mass, check_span
from explorer.tasks.attention.maps import MAX_TOKENS, AttentionMaps, viewer_limit
from explorer.tasks.attention.sparse import bigbird_runner, longformer_stack, stack_layers
from explorer.tasks.attention.stream import forward_pass, reduce_layers

if TYPE_CHECKING:  # typing only: the loader (and torch) load with the first model
    import torch
    from transformers import PreTrainedModel

    from explorer.runtime.loading import LoadedModel

__all__ = ["check_text", "extract", "extract_attention", "extract_detail", "load_detail", "n_maps",
           "token_limit", "viewer_tokens"]



class DecoderMaps(TypedDict, total=False):
    """An encoder-decoder's maps beside its encoder's: :class:`AttentionMaps`' decoder fields."""

    decoder_tokens: tuple[str, ...]
    decoder_attentions: np.ndarray  # (layers, H, Lt, Lt)
    cross_attentions: np.ndarray  # (layers, H, Lt, L)


def check_text(text: object, what: str = "text") -> str:
    """Return ``text`` if it has something to attend over, else raise a helpful ExplorerError."""
    return require_text(text, what=what, empty_hint="type a sentence to see its attention.",
                        max_chars=ATTENTION_TEXT_CHARS,
                        limit_note=f"only the first {MAX_TOKENS} tokens are shown anyway")


def _layers_heads(config: object) -> tuple[int | None, int | None]:
    return num_layers(config), num_heads(config)


def n_maps(config: object) -> int | None:
    """Attention matrices of one pass: layers x heads (encoder-decoders: encoder, decoder and cross)."""
    layers, heads = _layers_heads(config)
    if layers is None or heads is None:
        return None
    return layers * heads * (3 if is_encoder_decoder(config) else 1)


def device_limit(model: PreTrainedModel, facts: capacity.DeviceFacts) -> capacity.Limit:
    """The device's cap for this model (:func:`explorer.runtime.capacity.attention_tokens`)."""
    cfg = getattr(model, "config", None)
    layers, heads = _layers_heads(cfg)
    return capacity.attention_tokens(facts, layers, heads, is_encoder_decoder(cfg))


def _limit(model: PreTrainedModel, tokenizer: Tokenizer, max_tokens: int,
           facts: capacity.DeviceFacts) -> tuple[int, str]:
    """Tokens this extraction keeps and which limit set that number, and why."""
    if int(max_tokens) < 2:
        raise ExplorerError(f"max_tokens must be at least 2, got {max_tokens}.")
    model_max = token_limit(model, tokenizer, 1 << 30)
    cap = device_limit(model, facts)
    limit = max(2, min(int(max_tokens), model_max, cap.value))
    if limit == int(max_tokens) and limit < min(model_max, cap.value):
        return limit, f"the {limit:,} tokens asked for"
    if limit == model_max and model_max <= cap.value:
        return limit, f"the model's maximum input of {model_max:,} tokens"
    return limit, f"the viewer's cap here, {cap.reason}"


def viewer_tokens(model: PreTrainedModel, tokenizer: Tokenizer, max_tokens: int = MAX_TOKENS) -> int:
    """:func:`token_limit` within what the viewer holds for this model (512 tokens; up to 1,024 for
    models with few heads, e.g. Gemma 3 270M: 724, past its 512-token local window)."""
    return min(token_limit(model, tokenizer, max_tokens), viewer_limit(n_maps(getattr(model, "config", None))))


def token_limit(model: PreTrainedModel, tokenizer: Tokenizer, max_tokens: int = MAX_TOKENS) -> int:
    """How many tokens (special ones included) this model accepts, capped at ``max_tokens``.

    The smallest of ``max_tokens``, the tokenizer's ``model_max_length`` when sane (a missing one
    is ~1e30) and the config's absolute positions (:func:`explorer.architecture.modeltypes.max_input_tokens`:
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


def _family(model: PreTrainedModel) -> str:
    """"encoder-decoder" from the config; "decoder"/"encoder" is decided from the mask later."""
    return "encoder-decoder" if is_encoder_decoder(model.config) else "encoder"


def _encode(tokenizer: Tokenizer, text: str, limit: int) -> tuple[dict[str, torch.Tensor], int]:
    """Tokenize with truncation to ``limit`` tokens; also return the untruncated token count."""
    n_input = len(tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])
    enc = tokenizer(text, return_tensors="pt", truncation=True, max_length=limit)
    ids = enc["input_ids"][0].tolist()
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    if not [i for i in ids if i not in special]:
        raise ExplorerError("The text gives no tokens besides special ones for this tokenizer: "
                            "type some words.")
    return dict(enc), n_input


def _decoder_inputs(model: PreTrainedModel, tokenizer: Tokenizer, target: str, limit: int) -> torch.Tensor:
    """Teacher-forced decoder input ``(1, T)``: the start token then ``target``'s tokens shifted right."""
    import torch

    ids = tokenizer(target, add_special_tokens=True, truncation=True, max_length=limit)["input_ids"]
    start = getattr(model.config, "decoder_start_token_id", None)
    if start is None:
        start = model.config.pad_token_id if model.config.pad_token_id is not None else 0
    return torch.tensor([[int(start), *ids[:-1]]], dtype=torch.long)


def _device(model: PreTrainedModel) -> torch.device:
    from explorer.runtime.offload import input_device

    return input_device(model)


def _accepted(model: PreTrainedModel) -> Mapping[str, inspect.Parameter]:
    return inspect.signature(model.forward).parameters


def _check_reads_text(model: PreTrainedModel) -> None:
    """Refuse a model that reads no token ids (an image or speech model) before its forward pass fails."""
    if "input_ids" not in _accepted(model):
        raise ExplorerError(f"{type(model).__name__} does not read text (it takes no token ids): pick a text "
                            "model, e.g. bert-base or gpt2.")


def _model_inputs(model: PreTrainedModel, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The fields ``model`` takes, on its input device (a BERT vocab gives T5 token_type_ids it rejects)."""
    accepted = _accepted(model)
    device = _device(model)
    return {k: v.to(device) for k, v in inputs.items() if k in accepted}


def _run(model: PreTrainedModel, inputs: dict[str, torch.Tensor]) -> Any:
    """One forward pass with attention outputs; what the model raises on this text becomes an ExplorerError
    (:func:`explorer.tasks.attention.stream.forward_pass`)."""
    return forward_pass(model, _model_inputs(model, inputs), output_attentions=True)


def _prepare(model: PreTrainedModel, tokenizer: Tokenizer, text: str, target: str | None, limit: int,
             global_positions: tuple[int, ...]) -> tuple[PreTrainedModel, dict[str, torch.Tensor], int, str]:
    """Model to run, its inputs, the untruncated token count and the output format."""
    _check_reads_text(model)
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


def _collect(out: Any, runner: PreTrainedModel, fmt: str, inputs: dict[str, torch.Tensor], tokenizer: Tokenizer,
             glob: tuple[int, ...]) -> tuple[np.ndarray, DecoderMaps]:
    """Self-attention ``(layers, H, L, L)`` plus, for encoder-decoders, decoder and cross maps."""
    ids = inputs["input_ids"][0].tolist()
    if fmt == "longformer-window":
        return longformer_stack(out, runner, glob), {}
    if _family(runner) != "encoder-decoder":
        return stack_layers(out.attentions, runner, "attention", (len(ids), len(ids))), {}
    dec_ids = inputs["decoder_input_ids"][0].tolist()
    maps: DecoderMaps = {
        "decoder_tokens": tuple(tokenizer.convert_ids_to_tokens(dec_ids)),
        "decoder_attentions": stack_layers(out.decoder_attentions, runner, "decoder attention",
                                           (len(dec_ids), len(dec_ids))),
        "cross_attentions": stack_layers(out.cross_attentions, runner, "cross-attention",
                                         (len(dec_ids), len(ids))),
    }
    return stack_layers(out.encoder_attentions, runner, "encoder attention", (len(ids), len(ids))), maps


def _facts(model: PreTrainedModel, facts: capacity.DeviceFacts | None) -> capacity.DeviceFacts:
    return facts if facts is not None else capacity.device_facts(_device(model))


def _streamed(runner: PreTrainedModel, inputs: dict[str, torch.Tensor], fmt: str, length: int,
              glob: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """Every layer reduced to block masses as it comes: ``(layers, H, n, n)`` and the block size."""
    block = block_for(length)
    model_inputs = _model_inputs(runner, inputs)
    # (H, n, n) leaves the device
    kept = reduce_layers(runner, model_inputs, length, lambda att: block_mass(att, block).cpu(),
                         longformer=fmt == "longformer-window", global_idx=glob)
    return np.stack([k.numpy() for k in kept]).astype(np.float32, copy=False), block


def extract_attention(model: PreTrainedModel, tokenizer: Tokenizer, text: str, *, target: str | None = None,
                      max_tokens: int = MAX_TOKENS, global_positions: tuple[int, ...] = (0,),
                      name: str | None = None, untrained: bool = False,
                      facts: capacity.DeviceFacts | None = None) -> AttentionMaps:
    """Run ``text`` through ``model`` once and return every attention matrix as a full square.

    ``text`` is truncated to the smallest of ``max_tokens``, the model's maximum and the device's cap
    (:func:`explorer.runtime.capacity.attention_tokens`; ``facts``: the device, read from the model when
    ``None``); a notice says which and why. Texts longer than every map can be kept in full for
    (:func:`viewer_limit`: only on a GPU) come back as block masses (``maps.block > 1``), reduced
    layer by layer during the pass (:mod:`.stream`). Encoder-decoders are teacher-forced with
    ``target`` (default: the text itself) to get decoder and cross attention. ``global_positions``:
    Longformer tokens given global attention ([CLS] by default); positions past the end are dropped.
    """
    text = check_text(text)
    if target is not None and not target.strip():
        target = None
    limit, why = _limit(model, tokenizer, max_tokens, _facts(model, facts))
    runner, inputs, n_input, fmt = _prepare(model, tokenizer, text, target, limit, global_positions)
    ids = inputs["input_ids"][0].tolist()
    glob = tuple(sorted({p for p in global_positions if 0 <= p < len(ids)})) if fmt == "longformer-window" else ()
    maps: DecoderMaps = {}
    block = 1
    if len(ids) > viewer_limit(n_maps(model.config)) and _family(runner) != "encoder-decoder":
        att, block = _streamed(runner, inputs, fmt, len(ids), glob)
    else:
        att, maps = _collect(_run(runner, inputs), runner, fmt, inputs, tokenizer, glob)
    family = _family(runner) if maps else ("decoder" if _is_causal(att) else "encoder")
    dropped = sorted({p for p in global_positions if p >= len(ids)}) if fmt == "longformer-window" else []
    notices = _notices(n_input, len(ids), why, fmt, untrained) + _row_sum_notice(att, fmt) + _block_notice(block)
    return AttentionMaps(
        model=name or getattr(model.config, "name_or_path", "") or type(model).__name__,
        tokens=tuple(tokenizer.convert_ids_to_tokens(ids)), attentions=att, family=family,
        source_format=fmt, n_input_tokens=n_input, untrained=untrained, global_positions=glob,
        notices=notices + _dropped_notice(dropped, len(ids)), block=block, **maps)


def extract_detail(model: PreTrainedModel, tokenizer: Tokenizer, text: str, *, layer: int, head: int,
                   rows: tuple[int, int], cols: tuple[int, int] | None = None, target: str | None = None,
                   max_tokens: int = MAX_TOKENS, global_positions: tuple[int, ...] = (0,),
                   facts: capacity.DeviceFacts | None = None) -> np.ndarray:
    """Full-resolution cells ``[rows, cols]`` of one layer's head, from a fresh pass over the same tokens as
    :func:`extract_attention` (whose block maps hold no single cells): only that slice is kept.
    ``cols=None``: every key (one query's row: ``rows=(q, q + 1)``). ``(r, c)`` float32."""
    text = check_text(text)
    limit, _why = _limit(model, tokenizer, max_tokens, _facts(model, facts))
    runner, inputs, _n, fmt = _prepare(model, tokenizer, text, target, limit, global_positions)
    length = int(inputs["input_ids"].shape[1])
    r0, r1 = check_span(rows, length, "query")
    c0, c1 = (0, length) if cols is None else check_span(cols, length, "key")
    n_layers, n_heads = _layers_heads(model.config)
    if not 0 <= int(layer) < (n_layers or 1 << 30) or not 0 <= int(head) < (n_heads or 1 << 30):
        raise ExplorerError(f"Layer {layer}, head {head} does not exist: pick layer 0 to {(n_layers or 1) - 1} "
                            f"and head 0 to {(n_heads or 1) - 1}.")
    glob = tuple(sorted({p for p in global_positions if 0 <= p < length})) if fmt == "longformer-window" else ()
    model_inputs = _model_inputs(runner, inputs)
    kept = reduce_layers(runner, model_inputs, length, lambda att: att[:, r0:r1, c0:c1].float().cpu(),  # (H, r, c)
                         longformer=fmt == "longformer-window", global_idx=glob, layers={int(layer)})
    return kept[int(layer)][int(head)].numpy().astype(np.float32, copy=False)


def _block_notice(block: int) -> tuple[Notice, ...]:
    if block <= 1:
        return ()
    return (Notice("info", f"Long text: each cell is a block of {block} x {block} tokens (the mean over the "
                           f"block's queries of the weight they give its keys; rows still sum to 1). Zoom "
                           "into any range or pick one query for the exact weights."),)


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


def _notices(n_input: int, n_kept: int, why: str, fmt: str, untrained: bool) -> tuple[Notice, ...]:
    """What the page and the CLI show above the maps, each with its kind (a cut names its limit)."""
    out = []
    if n_input > n_kept:
        out.append(Notice("truncated", f"The text has {n_input:,} tokens; only the first {n_kept} are shown "
                                       f"(limit: {why})."))
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


def _load(ref: ModelRef, text: str, device: str | None, dtype: str | None) -> LoadedModel:
    from explorer.runtime.loading import load_model

    check_text(text)  # before loading: bad input should not cost a model load
    return load_model(ref, "base", attn_implementation="eager", device=device, dtype=dtype)


def extract(ref: ModelRef, text: str, *, target: str | None = None, max_tokens: int = MAX_TOKENS,
            global_positions: tuple[int, ...] = (0,), device: str | None = None,
            dtype: str | None = None) -> AttentionMaps:
    """Load the resolved model ``ref`` with the eager kernel (see explorer.runtime.loading) on ``device`` in ``dtype``
    (:mod:`explorer.runtime.placement`) and extract its attention; the result says what ran."""
    from explorer.runtime.placement import ran_on

    text = check_text(text)
    lm = _load(ref, text, device, dtype)
    maps = extract_attention(lm.model, lm.tokenizer, text, target=target, max_tokens=max_tokens,
                             global_positions=global_positions, name=lm.key, untrained=lm.untrained)
    return replace(maps, **ran_on(lm))


def load_detail(ref: ModelRef, text: str, *, layer: int, head: int, rows: tuple[int, int],
                cols: tuple[int, int] | None = None, target: str | None = None, max_tokens: int = MAX_TOKENS,
                global_positions: tuple[int, ...] = (0,), device: str | None = None,
                dtype: str | None = None) -> np.ndarray:
    """:func:`extract_detail` on a resolved model (the same load as :func:`extract`)."""
    lm = _load(ref, text, device, dtype)
    return extract_detail(lm.model, lm.tokenizer, text, layer=layer, head=head, rows=rows, cols=cols,
                          target=target, max_tokens=max_tokens, global_positions=global_positions)
