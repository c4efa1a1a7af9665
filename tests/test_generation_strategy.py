"""Decoding settings: every bad knob is one ExplorerError; temperature 0 means greedy."""

from __future__ import annotations

import math

import pytest

from explorer.core.errors import ExplorerError
from explorer.tasks.generation.strategy import MAX_BEAMS, MAX_NEW_TOKENS, DecodingSettings, logits_processors


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"strategy": "nucleus"}, "Unknown strategy"),
    ({"temperature": -0.5}, "from 0 to 100"),
    ({"temperature": math.nan}, "finite"),
    ({"top_p": 0.0}, "(0, 1]"),
    ({"top_p": 1.5}, "(0, 1]"),
    ({"top_p": -0.1}, "(0, 1]"),
    ({"top_k": 0}, "top-k"),
    ({"beams": MAX_BEAMS + 1}, "beams"),
    ({"beams": 0}, "beams"),
    ({"max_new_tokens": MAX_NEW_TOKENS + 1}, "max-new-tokens"),
    ({"max_new_tokens": 0}, "max-new-tokens"),
    ({"max_new_tokens": True}, "whole number"),
    ({"seed": -1}, "seed"),
])
def test_each_bad_knob_is_one_clear_error(kwargs: dict, words: str) -> None:
    with pytest.raises(ExplorerError, match=None) as err:
        DecodingSettings(**kwargs).validated()
    assert words in str(err.value)
    assert "\n" not in str(err.value)


def test_top_p_one_and_the_limits_themselves_are_accepted() -> None:
    DecodingSettings("top-p", top_p=1.0, beams=MAX_BEAMS, max_new_tokens=MAX_NEW_TOKENS).validated()


@pytest.mark.parametrize("strategy", ["sample", "top-k", "top-p"])
def test_temperature_zero_is_greedy(strategy: str) -> None:
    assert DecodingSettings(strategy, temperature=0).validated().effective_strategy == "greedy"


def test_beam_and_greedy_stay_themselves() -> None:
    assert DecodingSettings("beam", temperature=0).effective_strategy == "beam"
    assert DecodingSettings("greedy").effective_strategy == "greedy"


def test_processors_follow_generate_order_and_choice() -> None:
    names = [type(p).__name__ for p in logits_processors(DecodingSettings("top-k", temperature=0.7, top_k=5))]
    assert names == ["TemperatureLogitsWarper", "TopKLogitsWarper"]
    names = [type(p).__name__ for p in logits_processors(DecodingSettings("top-p", top_p=0.8))]
    assert names == ["TopPLogitsWarper"]
    assert list(logits_processors(DecodingSettings("sample"))) == []


@pytest.mark.parametrize("temperature", [1e-45, 1e-39, 1e-300, 0.009])
def test_a_temperature_too_cold_to_sample_decodes_greedily(temperature: float) -> None:
    """logits / 1e-45 overflow float32 (softmax gives NaN and torch.multinomial raised): greedy instead."""
    for strategy in ("sample", "top-k", "top-p"):
        assert DecodingSettings(strategy, temperature=temperature).validated().effective_strategy == "greedy"
    assert DecodingSettings("sample", temperature=0.01).validated().effective_strategy == "sample"


def test_the_new_token_cap_follows_the_device_and_says_why() -> None:
    from explorer.runtime import capacity

    cpu = capacity.DeviceFacts("cpu", "cpu", 8 * capacity.GIB, 2)
    gpu = capacity.DeviceFacts("cuda", "NVIDIA H100", 61 * capacity.GIB, 16)
    assert DecodingSettings(max_new_tokens=1024).validated(gpu).max_new_tokens == 1024
    for facts in (cpu, None):  # no facts: the CPU's cap, the narrowest
        with pytest.raises(ExplorerError, match="between 1 and 200") as err:
            DecodingSettings(max_new_tokens=201).validated(facts)
    assert "2-core CPU" in str(err.value) or facts is None
    with pytest.raises(ExplorerError, match="between 1 and 200 here") as err:
        DecodingSettings(max_new_tokens=201).validated(cpu)
    assert "kept at 200 new tokens for a 2-core CPU" in str(err.value)
    with pytest.raises(ExplorerError, match="between 1 and 1,024 here") as err:
        DecodingSettings(max_new_tokens=1025).validated(gpu)
    assert "cuda: 61.0 GiB free" in str(err.value)
