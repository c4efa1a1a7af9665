"""explorer.runtime.placement: the device/dtype choice, and that load_model really honours it (bf16 on the CPU)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.runtime import loading, modelcache, placement
from explorer.runtime.placement import Placement
from explorer.runtime.resolve import resolve
from tests.tiny_models import save_tiny


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Path:
    return save_tiny("bert", tmp_path_factory.mktemp("models") / "bert")


@pytest.fixture(autouse=True)
def fresh_cache():
    modelcache.clear_cache()
    yield
    modelcache.clear_cache()


def test_parse_accepts_names_aliases_and_empty() -> None:
    assert Placement.parse() == Placement() == placement.AUTO
    assert Placement.parse(" CPU ", "BF16") == Placement("cpu", "bfloat16")
    assert Placement.parse("", "") == Placement("auto", "auto")
    assert Placement.parse("cuda", torch.float16) == Placement("cuda", "float16")  # parsing never needs the GPU
    assert Placement("cpu", "float32").label == "cpu · float32"
    assert Placement("cpu", "bfloat16").kwargs() == {"device": "cpu", "dtype": "bfloat16"}


@pytest.mark.parametrize(("device", "dtype", "match"), [
    ("tpu", "auto", "Unknown device 'tpu'"), ("cpu", "int8", "Unknown dtype 'int8'"),
    ("<b>" * 50, "auto", r"\.\.\.'"),  # echoed input is cut
])
def test_parse_refuses_unknown_names(device, dtype, match) -> None:
    with pytest.raises(ExplorerError, match=match):
        Placement.parse(device, dtype)


def test_dataclass_validates_too() -> None:
    with pytest.raises(ExplorerError, match="Unknown device"):
        Placement("gpu")


def test_auto_keeps_the_old_rule() -> None:
    assert placement.resolve_dtype("auto", "cpu") == torch.float32
    assert placement.resolve_dtype("auto", "mps") == torch.float16
    assert Placement().resolve() == (placement.best_device(), placement.auto_dtype(placement.best_device()))
    assert loading.best_device() == placement.best_device()
    assert loading.device_dtype("cpu") == torch.float32


def test_float16_on_the_cpu_is_refused_with_advice() -> None:
    with pytest.raises(ExplorerError, match="bfloat16"):
        placement.resolve_dtype("float16", "cpu")
    assert placement.resolve_dtype("bfloat16", "cpu") == torch.bfloat16


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
def test_cuda_without_a_gpu_says_why() -> None:
    with pytest.raises(ExplorerError, match=r"^cuda is not available here: .*doctor"):
        placement.resolve_device("cuda")
    assert "cuda" not in placement.available_devices()
    assert placement.available_devices()[:2] == ("auto", "cpu")
    assert placement.unavailable_reason("cuda")


def test_bf16_on_a_gpu_without_it_is_refused(monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    with pytest.raises(ExplorerError, match="float16"):
        placement.resolve_dtype("bfloat16", "cuda")
    assert placement.auto_dtype("cuda") == torch.float16


def test_device_names_and_ran_on() -> None:
    assert placement.device_name("cpu") == "cpu" and placement.device_name("mps") == "mps (Apple GPU)"
    fake = type("L", (), {"device": "cpu", "dtype": "bfloat16"})()
    assert placement.ran_on(fake) == {"device": "cpu", "device_name": "cpu", "dtype": "bfloat16"}
    assert placement.caption("cpu", "float32") == "cpu · float32"


def test_cuda_device_name_reads_the_gpu(monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i: "NVIDIA H100 80GB HBM3")
    assert placement.device_name("cuda") == "cuda:0 (NVIDIA H100 80GB HBM3)"


# ---- load_model honours the choice -------------------------------------------------------------------

def test_bf16_choice_changes_the_loaded_model_and_the_cache_key(bert) -> None:
    fp32 = loading.load_model(resolve(str(bert)), "masked-lm", device="cpu", dtype="float32")
    bf16 = loading.load_model(resolve(str(bert)), "masked-lm", device="cpu", dtype="bfloat16")
    assert bf16 is not fp32  # the dtype is part of the model-cache key
    assert {p.dtype for p in fp32.model.parameters()} == {torch.float32}
    assert {p.dtype for p in bf16.model.parameters()} == {torch.bfloat16}
    assert (bf16.device, bf16.dtype, bf16.device_name) == ("cpu", "bfloat16", "cpu")
    assert bf16.to_dict()["dtype"] == "bfloat16" and bf16.to_dict()["device_name"] == "cpu"
    assert loading.load_model(resolve(str(bert)), "masked-lm", device="cpu", dtype="bf16") is bf16  # alias, same key
    auto = loading.load_model(resolve(str(bert)), "masked-lm")
    assert auto.dtype == placement.dtype_name(placement.auto_dtype(placement.best_device()))


def test_bf16_random_weights_and_results_still_make_sense(bert) -> None:
    from explorer.tasks.fillmask import fill_mask

    lm = loading.load_model(resolve("bert-base", random_weights=True), "masked-lm", device="cpu", dtype="bfloat16")
    assert lm.untrained and next(lm.model.parameters()).dtype == torch.bfloat16
    res = fill_mask([str(bert)], "The [MASK] sat.", top_k=5, device="cpu", dtype="bfloat16")
    [fill] = res.models
    assert (fill.device, fill.device_name, fill.dtype) == ("cpu", "cpu", "bfloat16")
    ids = torch.tensor([fill.masks[0].position])
    full = loading.load_model(resolve(str(bert)), "masked-lm", device="cpu", dtype="bfloat16")
    enc = full.tokenizer(fill.text, return_tensors="pt")
    with torch.inference_mode():
        probs = full.model(**enc).logits[0, ids].float().softmax(-1)  # (1, V)
    assert float(probs.sum()) == pytest.approx(1.0, abs=1e-3)
    scores = [p.score for p in fill.masks[0].predictions]
    assert scores == sorted(scores, reverse=True) and 0 < sum(scores) <= 1.0 + 1e-3


def test_bad_choice_is_refused_before_anything_loads(bert) -> None:
    with pytest.raises(ExplorerError, match="float16 on the CPU"):
        loading.load_model(resolve(str(bert)), "masked-lm", device="cpu", dtype="float16")
    with pytest.raises(ExplorerError, match="Unknown dtype"):
        loading.load_model(resolve(str(bert)), "masked-lm", dtype="float8")
    assert modelcache.cache_info() == []
