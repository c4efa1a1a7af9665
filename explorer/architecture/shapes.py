"""Output shapes of every module for one sequence, traced by a forward pass on the meta device.

No weights are allocated: the model (built on meta by :mod:`explorer.architecture.build`) runs on meta
tensors, and forward hooks record each module's first output tensor's shape. The layer tree shows
them (:func:`explorer.architecture.layertree.layer_tree`'s ``shapes``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import torch
from torch import nn
from torch.fx.experimental import _config as fx_config

from explorer.architecture.build import BUILD_LOCK
from explorer.architecture.modeltypes import is_encoder_decoder, max_input_tokens

if TYPE_CHECKING:  # transformers is imported where a config is built, not to type one
    from transformers import PretrainedConfig

__all__ = ["META_FAILURES", "dummy_inputs", "trace_shapes"]

# What a forward pass on meta tensors raises for an architecture that cannot run there, measured by
# tracing the catalog and every transformers masked/causal/seq2seq model type at its default config:
# RuntimeError (an op with no meta kernel, a length over the position table), ValueError (the model
# wants other inputs, e.g. audio features), NotImplementedError (data copied out of a meta tensor),
# KeyError (mixture-of-experts routing keyed on tensor values), TypeError (a config field left None
# reaching a torch op). A user picks the architecture and config, so these become a note; the same
# types raised by our own hooks are bugs and propagate.
META_FAILURES = (RuntimeError, ValueError, NotImplementedError, KeyError, TypeError)


def _first_tensor(out: object) -> torch.Tensor | None:
    """The first tensor in a module output (tensor, tuple or ModelOutput)."""
    if isinstance(out, torch.Tensor):
        return out
    values = out.values() if isinstance(out, dict) else out if isinstance(out, (tuple, list)) else ()
    for v in values:
        t = _first_tensor(v)
        if t is not None:
            return t
    return None


def dummy_inputs(model: nn.Module, config: PretrainedConfig, seq_len: int) -> dict[str, torch.Tensor]:
    """Meta-device inputs for one sequence of ``seq_len`` tokens (decoder inputs when needed)."""
    ids = torch.zeros(1, seq_len, dtype=torch.long, device="meta")
    inputs: dict[str, torch.Tensor] = {"input_ids": ids}
    config = getattr(model, "config", config)  # BERT2BERT is built from a BERT config
    if config is not None and is_encoder_decoder(config):
        inputs["decoder_input_ids"] = ids
    return inputs


@contextlib.contextmanager
def _neutral_item(seq_len: int) -> Iterator[None]:
    """Meta tensors hold no values, so ``.item()`` and ``bool()`` raise. Models call them only
    for sanity checks, mask shortcuts and lengths (``lengths.max().item()``); answer those with
    True / seq_len / 0.0 while tracing shapes, and restore the real methods afterwards.

    The patch is process-wide (every thread sees it), so it is held under ``build.BUILD_LOCK``:
    no model is built or loaded elsewhere while ``.item()`` answers neutrally on meta tensors.
    Real (non-meta) tensors keep their real answers throughout."""
    real = torch.Tensor.item

    def item(self):
        if self.device.type != "meta":
            return real(self)
        if self.dtype == torch.bool:
            return True
        return 0.0 if self.is_floating_point() else seq_len

    real_bool = torch.Tensor.__bool__

    def as_bool(self):
        return True if self.device.type == "meta" else real_bool(self)

    with BUILD_LOCK:
        # Patching methods on the class is the point here (undone below): mypy forbids it by default.
        torch.Tensor.item, torch.Tensor.__bool__ = item, as_bool  # type: ignore[method-assign]
        try:
            # Longformer finds its global tokens with nonzero(); on meta, assume every entry is set.
            # patch() is added to the config module at import by torch's install_config_module.
            with fx_config.patch(meta_nonzero_assume_all_nonzero=True):  # type: ignore[attr-defined]
                yield
        finally:
            torch.Tensor.item, torch.Tensor.__bool__ = real, real_bool  # type: ignore[method-assign]


def trace_shapes(model: nn.Module, config: PretrainedConfig, seq_len: int) -> tuple[dict[str, tuple[int, ...]], str]:
    """Output shape of every module for one sequence, from a forward pass on the meta device.

    Returns (shapes by module path, note). A length over the model's positions, or an architecture
    that cannot run on meta tensors (data-dependent control flow), gives empty shapes and a note
    saying why (shapes are a bonus: the tree, counts and FLOPs do not need them).
    """
    positions = max_input_tokens(config)
    if positions is not None and seq_len > positions:
        return {}, (f"Output shapes need a sequence length within the model's {positions:,} positions: "
                    f"pick {positions:,} or fewer to see them.")
    inputs = dummy_inputs(model, config, seq_len)
    shapes: dict[str, tuple[int, ...]] = {}
    own_errors: list[Exception] = []  # raised inside our hooks: bugs, never a note

    def record(name: str, out: object) -> None:
        try:
            t = _first_tensor(out)
            if t is not None and name not in shapes:
                shapes[name] = tuple(t.shape)
        except Exception as err:
            own_errors.append(err)
            raise

    hooks = [module.register_forward_hook(lambda _m, _inp, out, name=name: record(name, out))
             for name, module in model.named_modules()]
    try:
        with torch.no_grad(), _neutral_item(seq_len):
            model(**inputs)
        note = ""
    except META_FAILURES as err:
        if own_errors:
            raise
        note = f"Output shapes unavailable for this architecture on the meta device ({type(err).__name__})."
        shapes.clear()
    finally:
        for h in hooks:
            h.remove()
    return shapes, note
