"""Speed: the interleaving and the result's shape (no timings are asserted)."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.papers import speed


def test_speed_result_shape_and_ratio():
    s = speed.Speed(("bert-base", "distilbert"), (100.0, 62.5), 32, 20)
    assert s.to_dict() == {"models": [{"key": "bert-base", "ms_per_example": 100.0},
                                      {"key": "distilbert", "ms_per_example": 62.5}], "ratio": 1.6,
                            "device": "cpu", "device_name": "cpu", "dtype": "float32"}
    assert speed.PAPER["bert-base"] / speed.PAPER["distilbert"] == pytest.approx(1.63, abs=0.005)


@pytest.mark.parametrize("keys, runs, seq_len, message", [
    (["bert-base"], 20, 32, "exactly two"),
    (["bert-base", "distilbert", "gpt2"], 20, 32, "exactly two"),
    (["bert-base", "distilbert"], 0, 32, "--runs"),
    (["bert-base", "distilbert"], 20, 0, "--seq-len"),
    (["bert-bose", "distilbert"], 1, 8, "Unknown variant"),
    (["bert-base", "distilbert"], 1, 600, "at most 512 tokens"),
])
def test_bad_input_is_a_message(keys, runs, seq_len, message):
    with pytest.raises(ExplorerError, match=message):
        speed.measure(keys, seq_len=seq_len, runs=runs)


def test_thread_count_is_checked_and_restored():
    import torch

    before = torch.get_num_threads()
    with pytest.raises(ExplorerError, match="--threads"):
        speed.measure(["bert-base", "distilbert"], seq_len=8, runs=1, threads=0)
    with speed._threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_a_model_too_big_for_memory_is_refused_before_building(monkeypatch):
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.01")
    with pytest.raises(ExplorerError, match="needs about"):
        speed.measure(["bert-base", "distilbert"], seq_len=8, runs=1)


def test_measure_runs_two_tiny_real_models(monkeypatch):
    # tiny configs stand in for the published ones so the test builds in milliseconds
    from explorer.architecture import build

    real = build.make_config

    def tiny(key, overrides=None):
        return real(key, {"num_hidden_layers": 1, "hidden_size": 32, "num_attention_heads": 2,
                          "intermediate_size": 64})

    monkeypatch.setattr(build, "make_config", tiny)
    result = speed.measure(["bert-base", "distilbert"], seq_len=8, runs=2)
    assert result.keys == ("bert-base", "distilbert") and result.runs == 2
    assert all(ms > 0 for ms in result.ms_per_example)
