"""Whole generations: strategies side by side with one seed, the same tokens as stepping."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.tasks.generation import STRATEGIES, DecodingSettings, compare, generate, start
from tests.tiny_gemma import load_tiny_gemma


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return load_tiny_gemma(tmp_path_factory.mktemp("gemma"))


def test_compare_runs_every_strategy_with_one_seed(tiny) -> None:
    runs = compare(tiny, "The cat", DecodingSettings(max_new_tokens=5, seed=2, beams=2))
    assert [g.settings.strategy for g in runs] == list(STRATEGIES)
    assert all(len(g.steps) == 5 and g.finished for g in runs)
    assert {g.settings.seed for g in runs} == {2}
    again = compare(tiny, "The cat", DecodingSettings(max_new_tokens=5, seed=2, beams=2), ["sample"])
    assert again[0].token_ids == runs[1].token_ids


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_stepping_gives_the_same_tokens_as_a_whole_run(tiny, strategy: str) -> None:
    settings = DecodingSettings(strategy, max_new_tokens=6, beams=2, seed=1)
    _, decoder = start(tiny, "Once upon", settings)
    decoder.run(until=3)
    assert not decoder.finished
    decoder.run()
    assert decoder.token_ids == generate(tiny, "Once upon", settings).token_ids


def test_text_and_repetition_of_a_generation(tiny) -> None:
    gen = generate(tiny, "a b c", DecodingSettings("greedy", max_new_tokens=8))
    assert gen.text == tiny.tokenizer.decode(gen.token_ids, skip_special_tokens=True)
    assert len(gen.repetition()) == 8


def test_bad_settings_fail_before_any_compute(tiny) -> None:
    with pytest.raises(ExplorerError, match="top-p"):
        generate(tiny, "x", DecodingSettings("top-p", top_p=2.0))
    with pytest.raises(ExplorerError, match="empty"):
        generate(tiny, "", DecodingSettings())
