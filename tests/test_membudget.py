"""explorer.architecture.membudget: every size field checked in range (nested configs too), memory estimated before
allocation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.architecture import membudget
from explorer.core.errors import ExplorerError


@pytest.mark.parametrize("data, field", [
    ({"model_type": "t5", "num_decoder_layers": 1_000_000}, "num_decoder_layers"),
    ({"model_type": "bart", "decoder_layers": 100_000}, "decoder_layers"),
    ({"model_type": "encoder-decoder", "decoder": {"num_hidden_layers": 10_000}}, "decoder.num_hidden_layers"),
    ({"model_type": "bert", "hidden_size": 1_000_000_000_001}, "hidden_size"),
    ({"model_type": "albert", "num_hidden_groups": 0}, "num_hidden_groups"),
    ({"model_type": "bert", "num_attention_heads": -2}, "num_attention_heads"),
    ({"model_type": "bert", "hidden_size": 768.5}, "hidden_size"),
    ({"model_type": "bert", "vocab_size": "30522"}, "vocab_size"),
    ({"model_type": "bert", "num_hidden_layers": True}, "num_hidden_layers"),
    ({"model_type": "longformer", "attention_window": [512] * 600}, "attention_window"),
])
def test_out_of_range_fields_are_named(data: dict, field: str) -> None:
    with pytest.raises(ExplorerError, match=field.replace("[", r"\[")):
        membudget.check_config(data)


def test_real_configs_pass() -> None:
    from explorer.architecture import catalog

    for key in catalog.keys():
        membudget.check_config(catalog.variant_config(key))


def test_nearest_divisor_is_exact_and_bounded() -> None:
    assert membudget.nearest_divisor(768, 12) == 12
    assert membudget.nearest_divisor(768, 7) == 6 or membudget.nearest_divisor(768, 7) == 8
    assert membudget.nearest_divisor(10**12 + 1, 1024) >= 1  # returns at once: at most 1,024 steps


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10**15), st.integers(1, 1024))
def test_nearest_divisor_divides(n: int, k: int) -> None:
    d = membudget.nearest_divisor(n, k)
    assert n % d == 0 and 1 <= d <= max(n, 1)


def test_over_budget_names_estimate_and_cap(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "1")
    with pytest.raises(ExplorerError, match=r"t5-11b needs about 48\.4 GB .* allows 1\.0 GB"):
        membudget.require_fits(11_000_000_000, "t5-11b")
    assert membudget.require_fits(1_000_000, "tiny") == membudget.estimate_bytes(1_000_000)


def test_bad_cap_is_a_message(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "lots")
    with pytest.raises(ExplorerError, match="EXPLORER_MEMORY_CAP_GB"):
        membudget.memory_budget()


def test_checkpoint_parameters_reads_headers_only(tmp_path) -> None:
    import torch
    from safetensors.torch import save_file

    save_file({"a": torch.zeros(3, 4), "b": torch.zeros(5)}, str(tmp_path / "model.safetensors"))
    assert membudget.checkpoint_parameters(tmp_path) == 17


_NUMBERS = st.one_of(st.integers(-10**40, 10**40), st.floats(allow_nan=True), st.text(max_size=5), st.none(),
                     st.booleans(), st.lists(st.integers(), max_size=3))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(membudget.FIELD_RANGES)), _NUMBERS, max_size=6))
def test_any_field_values_give_pass_or_explorer_error(fields: dict) -> None:
    try:
        membudget.check_config({"model_type": "bert", **fields})
    except ExplorerError as err:
        assert "must be a whole number" in str(err)
    else:
        for name, value in fields.items():
            lo, hi = membudget.FIELD_RANGES[name]
            assert value is None or (isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi)
            assert not (isinstance(value, float) and math.isnan(value))


def test_half_precision_counts_two_bytes_a_parameter(monkeypatch) -> None:
    import torch

    assert (membudget.estimate_bytes(1_000_000, "bfloat16") == membudget.estimate_bytes(1_000_000, torch.float16)
            == 2_200_000)
    assert membudget.estimate_bytes(1_000_000, torch.float32) == 4_400_000
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "3")  # 1B parameters: 4.4 GB in float32, 2.2 GB in bfloat16
    assert membudget.require_fits(1_000_000_000, "a 1B model", torch.bfloat16) == 2_200_000_000
    with pytest.raises(ExplorerError, match=r"4\.4 GB \(1,000M parameters in float32\)"):
        membudget.require_fits(1_000_000_000, "a 1B model", torch.float32)


def test_a_cuda_load_must_fit_the_gpu_and_the_cpu_it_passes_through(monkeypatch) -> None:
    monkeypatch.delenv("EXPLORER_MEMORY_CAP_GB", raising=False)
    monkeypatch.setattr(membudget, "_available_ram", lambda: 100 * 10**9)
    monkeypatch.setattr(membudget, "_available_gpu", lambda device: 10 * 10**9)  # injected: a GPU with 10 GB free
    assert membudget.load_budget("cpu") == membudget.memory_budget("cpu")
    assert membudget.load_budget("cpu")[0] == 70 * 10**9
    allowed, why = membudget.load_budget("cuda")
    assert allowed == 7 * 10**9 and why.startswith("GPU: 70% of the 10.0 GB free")
    monkeypatch.setattr(membudget, "_available_ram", lambda: 5 * 10**9)  # a small host: the CPU copy bounds it
    assert membudget.load_budget("cuda")[0] == int(5 * 10**9 * 0.7)
