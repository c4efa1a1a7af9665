"""Configurations and models: every catalog variant (or a user's config.json) -> an nn.Module.

Models are built on the ``meta`` device by default: shapes and parameter counts without a
single byte of weights, so GPT-3 175B is inspected as easily as BERT-base. Variants that are
not a transformers ``model_type`` (Sentence-BERT, ColBERT, FastBERT, SpanBERT, StructBERT,
ELECTRA's generator/discriminator pair, BERT2BERT) are small modules on top of transformers'
classes, in :mod:`explorer.architecture.custom_models`, so their trees and counts are real too.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

import torch
from torch import nn

from explorer.architecture import catalog, custom_models, membudget
from explorer.architecture.modeltypes import is_encoder_decoder, num_heads, num_layers
from explorer.core import userfiles
from explorer.core.errors import ExplorerError, shorten

if TYPE_CHECKING:  # transformers is imported where a config is built, not to type one
    from transformers import PretrainedConfig

__all__ = [
    "KNOBS", "STANDARD_HEADS", "MAX_LAYERS", "BUILD_LOCK", "config_from_dict", "parse_config_json",
    "apply_overrides", "validate", "make_config", "default_head", "instantiate", "build", "block_list",
    "share_all_layers",
]


# Generic knob -> the config attributes that hold it (first one that exists wins; the
# decoder twin of an encoder-decoder is set too, so "layers" changes both stacks).
KNOBS: dict[str, tuple[str, ...]] = {
    "num_hidden_layers": ("num_hidden_layers", "num_decoder_layers", "decoder_layers"),
    "hidden_size": ("hidden_size",),
    "num_attention_heads": ("num_attention_heads", "decoder_attention_heads"),
    "intermediate_size": ("intermediate_size", "n_inner", "d_ff", "dff", "hidden_dim",
                          "encoder_ffn_dim", "decoder_ffn_dim"),
    "vocab_size": ("vocab_size",),
    "embedding_size": ("embedding_size",),
    "num_hidden_groups": ("num_hidden_groups",),
}
STANDARD_HEADS = ("base", "pretraining", "mlm", "causal-lm", "seq2seq")
MAX_LAYERS = membudget.MAX_LAYERS  # one limit, in explorer.architecture.membudget

# transformers 5.23 builds models by patching process-wide state (torch's default dtype in
# from_config; PreTrainedModel.tie_weights and torch.nn.init swapped for no-ops in
# from_pretrained). Two threads building at once can leave weight tying switched off for the
# rest of the process, so every model build in this library (meta or real, from a config or a
# checkpoint) holds this lock. Streamlit serves each browser session from its own thread.
BUILD_LOCK = threading.RLock()


def _auto(head: str):
    import transformers as tf

    return {
        "base": tf.AutoModel,
        "pretraining": tf.AutoModelForPreTraining,
        "mlm": tf.AutoModelForMaskedLM,
        "causal-lm": tf.AutoModelForCausalLM,
        "seq2seq": tf.AutoModelForSeq2SeqLM,
    }[head]


def config_from_dict(data: Mapping[str, object]) -> PretrainedConfig:
    """A transformers config from a config.json dict (``model_type`` required).

    Every size field of every nested sub-config is checked (``explorer.architecture.membudget``) before
    transformers sees the dict; mistakes are ``ExplorerError`` messages.

    >>> config = config_from_dict({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2,
    ...     "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})
    >>> type(config).__name__, config.hidden_size
    ('BertConfig', 64)
    >>> config_from_dict({"model_type": "t5", "num_decoder_layers": 1000000})
    Traceback (most recent call last):
    ...
    explorer.core.errors.ExplorerError: num_decoder_layers is 1,000,000; it must be a whole number from 1 to 512.
    """
    from huggingface_hub.dataclasses import (
        StrictDataclassClassValidationError,
        StrictDataclassFieldValidationError,
    )
    from transformers import AutoConfig, EncoderDecoderConfig

    membudget.check_config(data)  # every size field of every nested config in range, before transformers sees it
    data = dict(data)
    model_type = data.pop("model_type", None)
    if not model_type:
        raise ExplorerError("The config has no 'model_type' field: add one (e.g. \"bert\", \"gpt2\", \"t5\").")
    if not isinstance(model_type, str):
        raise ExplorerError("The config's 'model_type' must be a name such as \"bert\", \"gpt2\" or \"t5\".")
    if model_type == "encoder-decoder" and "encoder" not in data:
        enc = config_from_dict(data)
        dec = config_from_dict({**data, "is_decoder": True, "add_cross_attention": True})
        return EncoderDecoderConfig.from_encoder_decoder_configs(enc, dec)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return AutoConfig.for_model(model_type, **data)
    except ValueError as err:
        if "Unrecognized model" in str(err) or "model_type" in str(err):
            raise ExplorerError(f"Unknown model_type {shorten(model_type)!r}: use one transformers knows.") from err
        raise ExplorerError(f"Invalid config: {err}") from err
    except (TypeError, StrictDataclassFieldValidationError, StrictDataclassClassValidationError) as err:
        # a field of the wrong type, or fields that do not fit together (transformers' validators)
        raise ExplorerError(f"Invalid config value: {_one_line(err)}. Use whole numbers for sizes.") from err


def _one_line(err: Exception, limit: int = 200) -> str:
    """An exception's message on one line (validators put the reason on the next lines)."""
    text = " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_config_json(text: str | bytes) -> PretrainedConfig:
    """A config from the text of an uploaded config.json: size, depth and number limits, clear messages."""
    data = userfiles.loads_json(text, "That config.json")
    if not isinstance(data, dict):
        raise ExplorerError("A config.json must hold a JSON object ({...}), not a list or a value.")
    return config_from_dict(data)


def apply_overrides(config: PretrainedConfig, overrides: Mapping[str, int] | None) -> PretrainedConfig:
    """Set generic knobs (see ``KNOBS``) on a copy of ``config``; values must be positive ints."""
    config = config.__class__.from_dict(config.to_dict())
    for knob, value in (overrides or {}).items():
        if knob not in KNOBS:
            raise ExplorerError(f"Unknown setting {shorten(knob)!r}; choose from {', '.join(KNOBS)}.")
        value = int(value)
        if value < 1:
            raise ExplorerError(f"{knob.replace('_', ' ')} must be at least 1 (got {value}).")
        targets = [a for a in KNOBS[knob] if hasattr(config, a)]
        if not targets and knob != "num_hidden_groups":
            raise ExplorerError(f"This architecture has no {knob.replace('_', ' ')} setting.")
        for attr in targets:
            setattr(config, attr, value)
    return config


def validate(config: PretrainedConfig) -> None:
    """Catch the invalid combinations transformers would only report deep inside a build."""
    hidden = getattr(config, "hidden_size", None)
    heads = num_heads(config)
    membudget.check_config(config.to_dict())  # also after overrides: every layer field of every stack
    layers = num_layers(config)
    if isinstance(hidden, int) and isinstance(heads, int):
        if heads < 1:
            raise ExplorerError("The model needs at least one attention head.")
        if config.model_type not in ("t5", "mt5") and hidden % heads:
            raise ExplorerError(
                f"Hidden size {hidden} is not divisible by {heads} heads: each head gets hidden/heads "
                f"dimensions. Try a hidden size of {heads * max(1, round(hidden / heads))}, or "
                f"{membudget.nearest_divisor(hidden, heads)} heads."
            )
    groups = getattr(config, "num_hidden_groups", None)
    if isinstance(groups, int) and isinstance(layers, int) and (groups < 1 or layers % groups):
        raise ExplorerError(f"{layers} layers cannot be split into {groups} shared groups: pick a divisor.")


def make_config(key: str, overrides: Mapping[str, int] | None = None) -> PretrainedConfig:
    """The variant's transformers config (with optional generic overrides), validated."""
    config = config_from_dict(catalog.variant_config(key))
    config = apply_overrides(config, overrides) if overrides else config
    validate(config)
    return config


def default_head(config: PretrainedConfig) -> str:
    """The richest standard head transformers offers for this config."""
    if is_encoder_decoder(config):
        return "seq2seq"
    for head in ("pretraining", "mlm", "causal-lm"):
        if type(config) in _auto(head)._model_mapping:
            return head
    return "base"


def _resolve_extra(extra: Mapping[str, object] | None) -> dict[str, object]:
    """Catalog keys named in ``extra`` (ELECTRA's generator and discriminator) -> their configs.

    Resolving them here keeps :mod:`explorer.architecture.custom_models` free of any import of this module.
    """
    out = dict(extra or {})
    for part in ("generator", "discriminator"):
        key = out.get(part)
        if isinstance(key, str):
            out[f"{part}_config"] = make_config(key)
    return out


def instantiate(config: PretrainedConfig, head: str, device: str = "meta",
                extra: Mapping[str, object] | None = None) -> nn.Module:
    """Build ``config`` with a standard or custom head on ``device`` (meta: no memory)."""
    validate(config)
    extra = _resolve_extra(extra)
    if device != "meta":  # count on meta first: a model over the memory budget is never allocated
        meta = instantiate(config, head, "meta", extra)
        membudget.require_fits(sum(p.numel() for p in meta.parameters()), f"This {config.model_type} model",
                            device=str(device))
    try:
        with BUILD_LOCK, torch.device(device), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if head in custom_models.CUSTOM:
                return custom_models.CUSTOM[head](config, extra)
            if head not in STANDARD_HEADS:
                raise ExplorerError(f"Unknown head {shorten(head)!r}; choose from "
                                    f"{STANDARD_HEADS + tuple(custom_models.CUSTOM)}.")
            return _auto(head).from_config(config)
    except ExplorerError:
        raise
    except (ValueError, TypeError) as err:  # a size transformers/torch refuse; other errors are bugs
        raise ExplorerError(f"This configuration does not build: {_one_line(err)}. "
                            "Check the sizes you changed.") from err


def build(key: str, head: str | None = None, overrides: Mapping[str, int] | None = None,
          device: str = "meta", share_layers: bool = False) -> nn.Module:
    """Build a catalog variant with its own head (``head=None``) or a chosen one."""
    variant = catalog.get_variant(key)
    config = make_config(key, overrides)
    model = instantiate(config, head or variant.head, device, variant.extra)
    return share_all_layers(model) if share_layers else model


def block_list(model: nn.Module) -> tuple[str, nn.ModuleList] | None:
    """The model's main stack of transformer blocks: the longest ModuleList (first on ties)."""
    best: tuple[str, nn.ModuleList] | None = None
    for name, module in model.named_modules():
        if isinstance(module, nn.ModuleList) and len(module) > 1 and (best is None or len(module) > len(best[1])):
            best = (name, module)
    return best


def share_all_layers(model: nn.Module) -> nn.Module:
    """ALBERT-style cross-layer sharing for any model: every block becomes the first one.

    The blocks are then one module called N times, so the unique parameter count drops by
    (N - 1) blocks while the compute per token stays the same.
    """
    found = block_list(model)
    if found is None:
        raise ExplorerError("This model has no stack of repeated layers to share.")
    _, blocks = found
    for i in range(1, len(blocks)):
        blocks[i] = blocks[0]
    return model
