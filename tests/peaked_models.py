"""Tiny masked LMs with a peaked head (test fixture): top-k answers that float noise cannot reorder.

``tests.tiny_models.save_tiny`` builds near-uniform heads (std 0.02 weights: every probability is about
1/V), so padding or another batch size can swap neighbours in a top-k. Scaling the vocabulary projection
(a low softmax temperature) separates them while the encoder stays untouched.

    path = save_peaked("bert", tmp_path / "bert")    # then explorer.runtime.loading.load_model(str(path), "masked-lm")
"""

from __future__ import annotations

from pathlib import Path

import torch

from tests.tiny_models import save_tiny

SCALE = 50  # the logits' spread x50: the top answer holds 10-90% of the mass instead of ~1/V


def save_peaked(kind: str, directory: str | Path, scale: float = SCALE) -> Path:
    """``save_tiny(kind, directory)`` with its output projection multiplied by ``scale``; returns the path."""
    from transformers import AutoModelForMaskedLM

    directory = save_tiny(kind, directory)
    model = AutoModelForMaskedLM.from_pretrained(directory)
    with torch.no_grad():  # tied to the input embeddings in some families: a LayerNorm follows them there
        model.get_output_embeddings().weight.mul_(scale)
    model.save_pretrained(directory)
    return directory
