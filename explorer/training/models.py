"""The lab's models: a catalog variant's config, scaled down by the knobs, wired to the lab tokenizer.

Every build goes through :mod:`explorer.architecture.build` (its validation, its memory budget
and its one build lock) and is seeded, so a run with the same seed starts from the same weights.

>>> from explorer.training import recipes
>>> m = build(recipes.get("mlm"), "tiny", seed=0)
>>> type(m).__name__, m.config.vocab_size, m.config.num_hidden_layers
('BertForMaskedLM', 8192, 2)
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from explorer.architecture import build as arch
from explorer.training import recipes, vocab
from explorer.training.recipes import Recipe

__all__ = ["SPECIAL_IDS", "build", "config", "parameters"]

# The lab tokenizer's ids for every special a config names (vocab.SPECIALS order: PAD UNK CLS SEP MASK).
SPECIAL_IDS = {"pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 3, "sep_token_id": 3, "cls_token_id": 2,
               "decoder_start_token_id": 2, "mask_token_id": 4}
MAX_POSITIONS = 512


def config(recipe: Recipe, size: str, variant: str | None = None) -> Any:
    """The scaled-down config of ``recipe``'s variant (or of ``variant``, for ELECTRA's two halves)."""
    cfg = arch.make_config(variant or recipe.variant, recipes.overrides(recipe.name, size, len(vocab.tokenizer())))
    for attr, value in SPECIAL_IDS.items():
        if hasattr(cfg, attr) or attr in ("pad_token_id", "bos_token_id", "eos_token_id"):
            setattr(cfg, attr, value)
    if getattr(cfg, "max_position_embeddings", 0) > MAX_POSITIONS + 2:  # GPT-J/long models: the lab never needs more
        cfg.max_position_embeddings = MAX_POSITIONS + 2
    return cfg


def build(recipe: Recipe, size: str, seed: int, device: str = "cpu") -> nn.Module:
    """The randomly initialised model of ``recipe`` at ``size`` (train mode), seeded."""
    cfg = config(recipe, size)
    with arch.BUILD_LOCK:  # seeding and init must not interleave with another thread's build
        torch.manual_seed(seed)
        model = arch.instantiate(cfg, recipe.head, "cpu")
    return model.to(device).train()


def parameters(model: nn.Module) -> int:
    """Unique trainable parameters (tied and shared weights counted once)."""
    return sum(p.numel() for p in model.parameters())
