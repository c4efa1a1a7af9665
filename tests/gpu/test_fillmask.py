"""Fill-mask per device and dtype: equal to transformers' pipeline on the same weights; CPU and CUDA agree."""

from __future__ import annotations

import pytest
import torch

from explorer.runtime.loading import device_dtype, load_model
from explorer.runtime.resolve import resolve
from explorer.tasks import fillmask as fm
from tests.gpu.conftest import AGREEMENT, CUDA_HALF, DEVICES, PLACES, TOLERANCE
from tests.gpu.peaked import place, same_ranking

PROMPT = "The capital of France is [MASK] and the [MASK] is nice."


def _top(fill) -> list[list[tuple[int, float]]]:
    return [[(p.token_id, p.score) for p in m.predictions] for m in fill.masks]


@pytest.mark.parametrize("kind", ["bert", "roberta", "electra-generator"])
@pytest.mark.parametrize("where", PLACES)
def test_equals_the_pipeline_on_the_same_weights_and_dtype(peaked_dir, kind, where) -> None:
    from transformers import pipeline

    lm = place(peaked_dir(kind), *where, kind)
    ours = fm.fill_one(lm, PROMPT, top_k=5)
    ref = pipeline("fill-mask", model=lm.model, tokenizer=lm.tokenizer, top_k=5, device=lm.model.device)(
        PROMPT.replace("[MASK]", lm.tokenizer.mask_token))
    assert ours.device == where[0]
    for got, expected in zip(_top(ours), ref, strict=True):
        same_ranking(got, [(e["token"], e["score"]) for e in expected], TOLERANCE[where[1]])


@pytest.mark.parametrize("device", DEVICES)
def test_load_model_puts_it_on_the_device_in_its_dtype_and_fill_mask_runs_there(peaked_dir, device) -> None:
    lm = load_model(resolve(str(peaked_dir("bert"))), "masked-lm", device=device)
    param = next(lm.model.parameters())
    assert (lm.device, param.device.type, param.dtype) == (device, device, device_dtype(device))
    assert lm.dtype == str(param.dtype).removeprefix("torch.")
    result = fm.fill_mask([str(peaked_dir("bert"))], PROMPT, 3, loader=lambda spec, task, **kw: lm)
    assert not result.errors and result.models[0].device == device and len(result.models[0].masks) == 2


@pytest.mark.parametrize("where", [pytest.param(("cuda", torch.float32), id="cuda-float32",
                                                marks=CUDA_HALF[0].marks), *CUDA_HALF])
def test_cuda_agrees_with_the_cpu(peaked_dir, where) -> None:
    cpu = _top(fm.fill_one(place(peaked_dir("bert"), "cpu", torch.float32, "bert"), PROMPT, top_k=5))
    gpu = _top(fm.fill_one(place(peaked_dir("bert"), *where, "bert"), PROMPT, top_k=5))
    for got, expected in zip(gpu, cpu, strict=True):
        same_ranking(got, expected, AGREEMENT[where[1]])
