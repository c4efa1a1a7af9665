"""Attention maps per device and dtype: equal to the model's own ``output_attentions`` on the same weights and
dtype (encoder, and an encoder-decoder's three kinds); CPU and CUDA agree."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.runtime.offload import input_device
from explorer.tasks.attention.extract import extract_attention
from tests.gpu.conftest import AGREEMENT, CUDA_HALF, PLACES, TOLERANCE
from tests.gpu.peaked import place

TEXT = "The cat sat on the mat because it was warm."


def _eager(lm):
    lm.model.set_attn_implementation("eager")  # a private copy (place() builds one per test): eager returns maps
    return lm


@pytest.mark.parametrize("where", PLACES)
def test_encoder_maps_equal_the_models_attentions(peaked_dir, where) -> None:
    lm = _eager(place(peaked_dir("bert"), *where, "bert"))
    maps = extract_attention(lm.model, lm.tokenizer, TEXT)
    enc = lm.tokenizer(TEXT, return_tensors="pt").to(input_device(lm.model))
    with torch.inference_mode():
        ref = lm.model(**enc, output_attentions=True).attentions
    ref = np.stack([a[0].float().cpu().numpy() for a in ref])  # (layers, H, L, L)
    assert maps.attentions.dtype == np.float32 and maps.attentions.shape == ref.shape
    assert float(np.abs(maps.attentions - ref).max()) <= TOLERANCE[where[1]]


@pytest.mark.parametrize("where", PLACES)
def test_encoder_decoder_gives_all_three_kinds(peaked_dir, where) -> None:
    lm = _eager(place(peaked_dir("t5"), *where, "t5"))
    maps = extract_attention(lm.model, lm.tokenizer, TEXT)
    assert maps.family == "encoder-decoder" and maps.cross_attentions.shape[-1] == maps.attentions.shape[-1]
    rows = maps.attentions.sum(-1, dtype=np.float64)
    assert np.abs(rows - 1).max() <= TOLERANCE[where[1]]  # every query row is a distribution


@pytest.mark.parametrize("where", CUDA_HALF)
def test_cuda_maps_agree_with_the_cpu(peaked_dir, where) -> None:
    cpu = _eager(place(peaked_dir("bert"), "cpu", torch.float32, "bert"))
    gpu = _eager(place(peaked_dir("bert"), *where, "bert"))
    a, b = (extract_attention(x.model, x.tokenizer, TEXT).attentions for x in (cpu, gpu))
    assert float(np.abs(a - b).max()) <= AGREEMENT[where[1]]
