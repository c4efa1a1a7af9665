"""One forward pass whose attention maps are reduced layer by layer as they come, never all held at once.

``output_attentions=True`` makes a model keep every layer's ``(1, H, T, T)`` until the pass ends:
12 x 12 x 4,096^2 float32 is 9.7 GB. :func:`reduce_layers` instead hooks the attention modules that
transformers itself records (``_can_record_outputs["attentions"]``, BigBird's block-sparse one
included), runs *without* ``output_attentions`` and hands each layer's ``(H, L, L)`` weights, on
the model's device, to ``reduce`` (a block mass, a slice, a row), keeping only what it returns. Peak
memory for the maps: one layer's weights (which the eager kernel builds anyway) plus the reductions.

Longformer keeps its own legacy outputs: its windowed rows ``(H, L, n_global + 2w + 1)`` are small
and come for every layer; each layer is scattered onto the square one head at a time
(``H``-fold less than a layer: 64 MB at 4,096 tokens) and reduced.
Models without recorded attention modules fall back to ``output_attentions=True`` and reduce each
layer after the pass (memory as before).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.tasks.attention.sparse import longformer_to_square, no_attention_error

if TYPE_CHECKING:  # typing only: the models bring torch and transformers
    import torch
    from transformers import PreTrainedModel

__all__ = ["MODEL_FAILURES", "Reducer", "attention_modules", "forward_pass", "reduce_layers"]

Reducer = Callable[[Any], Any]  # (h, L, L) tensor of one layer's heads -> what to keep (leading axis h)
# What a forward pass raises on a checkpoint or text the user picked (tried on tiny saved models):
# IndexError (token ids past the embedding table: a tokenizer bigger than the model's vocabulary),
# RuntimeError (shapes the config contradicts, out of memory, a CUDA assert), ValueError (a model that
# wants other inputs). They become "could not run on this text"; other types, and any error raised
# by our own hooks during the pass, propagate: they are bugs.
MODEL_FAILURES = (RuntimeError, ValueError, IndexError)


def _specs(model: PreTrainedModel) -> list[tuple[type, int, str | None]]:
    """(module class, output index, layer-name filter) of the attention weights transformers records."""
    raw = getattr(type(model), "_can_record_outputs", None) or {}
    specs = raw.get("attentions")
    if specs is None:
        return []
    out = []
    for spec in specs if isinstance(specs, list) else [specs]:
        target = getattr(spec, "target_class", spec)
        if isinstance(target, type):
            out.append((target, int(getattr(spec, "index", 1)), getattr(spec, "layer_name", None)))
    return out


def attention_modules(model: PreTrainedModel) -> list[tuple[torch.nn.Module, int]]:
    """The self-attention modules (in layer order) and where their weights are in the output tuple."""
    found: list[tuple[torch.nn.Module, int]] = []
    for name, module in model.named_modules():
        found_module = module  # isinstance with a class read at run time narrows ``module`` to object
        for cls, index, layer_name in _specs(model):
            if isinstance(module, cls) and (layer_name is None or f".{layer_name.strip('.')}." in f".{name}."):
                found.append((found_module, index))
                break
    return found


def forward_pass(model: PreTrainedModel, inputs: dict[str, torch.Tensor], output_attentions: bool,
                 hook_errors: Collection[BaseException] = ()) -> Any:
    """One pass in inference mode; what the model raises on this input (``MODEL_FAILURES``) becomes an
    ExplorerError, unless it is one of ``hook_errors`` (raised by our own hooks: re-raised as it is)."""
    import torch

    try:
        with torch.inference_mode():
            return model(**inputs, output_attentions=output_attentions, return_dict=True)
    except MODEL_FAILURES as err:
        if any(err is own for own in hook_errors):
            raise
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ExplorerError(f"{type(model).__name__} could not run on this text: {first[:300]}. Try a shorter text; "
                            "with a saved directory, check that its tokenizer and config.json belong to its "
                            "weights (save them together again).") from err


def _hooked(model: PreTrainedModel, inputs: dict[str, torch.Tensor], length: int, reduce: Reducer,
            layers: Collection[int] | None) -> list[Any]:
    """Reduce in forward hooks on the model's view, its lock held (explorer.internals.hooked: the cached model is
    shared, and its other requests neither see these hooks nor wait for them)."""
    kept: list[Any] = []
    errors: list[BaseException] = []

    def hook(_module: object, _args: object, output: object, index: int) -> None:
        if not isinstance(output, tuple) or output[index] is None:
            return
        try:
            layer = len(kept)
            att = output[index][0, :, :length, :length]  # (H, L, L): first item, internal padding cropped
            kept.append(reduce(att) if layers is None or layer in layers else None)
        except Exception as err:  # ours, not the model's: forward_pass lets it through
            errors.append(err)
            raise

    from explorer.internals import hooked  # torch at its top: the attention package keeps torch lazy

    with hooked.session(model) as copy:
        view = cast("PreTrainedModel", copy)  # the same class as the model: a copy of its module tree
        handles = [module.register_forward_hook(lambda m, a, o, index=index: hook(m, a, o, index))
                   for module, index in attention_modules(view)]
        try:
            forward_pass(view, inputs, output_attentions=False, hook_errors=errors)
        finally:
            for handle in handles:
                handle.remove()
    return kept


def _longformer(model: PreTrainedModel, inputs: dict[str, torch.Tensor], reduce: Reducer, global_idx: tuple[int, ...],
                layers: Collection[int] | None) -> list[Any]:
    import torch

    out = forward_pass(model, inputs, output_attentions=True)
    if not out.attentions:
        raise no_attention_error(model, "attention")
    glob = out.global_attentions or (None,) * len(out.attentions)
    kept: list[Any] = []
    for layer, (local, g) in enumerate(zip(out.attentions, glob, strict=True)):
        if layers is not None and layer not in layers:
            kept.append(None)
            continue
        loc = local[0].float().cpu().numpy()  # (H, L, n_global + 2w + 1)
        gl = None if g is None else g[0].float().cpu().numpy()  # (H, Lp, n_global)
        heads = [reduce(torch.from_numpy(longformer_to_square(loc[h:h + 1], None if gl is None else gl[h:h + 1],
                                                              global_idx)))
                 for h in range(loc.shape[0])]  # one (1, L, L) square at a time
        kept.append(torch.cat(heads) if isinstance(heads[0], torch.Tensor) else np.concatenate(heads))
    return kept


def reduce_layers(model: PreTrainedModel, inputs: dict[str, torch.Tensor], length: int, reduce: Reducer, *,
                  longformer: bool = False, global_idx: tuple[int, ...] = (),
                  layers: Collection[int] | None = None) -> list[Any]:
    """One forward pass; ``reduce(att)`` for each self-attention layer's ``(H, L, L)`` weights, in
    layer order (``None`` for layers not in ``layers``). Raises the usual ExplorerError when the
    model gives no weights (a non-eager kernel)."""
    if longformer:
        return _longformer(model, inputs, reduce, global_idx, layers)
    if attention_modules(model):
        kept = _hooked(model, inputs, length, reduce, layers)
        if kept:
            return kept
        raise no_attention_error(model, "attention")
    out = forward_pass(model, inputs, output_attentions=True)  # no recorded modules: the legacy tuple
    if not out.attentions:
        raise no_attention_error(model, "attention")
    return [reduce(a[0, :, :length, :length]) if layers is None or i in layers else None
            for i, a in enumerate(out.attentions)]
