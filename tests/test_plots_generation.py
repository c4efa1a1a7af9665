"""Decoding-lab figures: one cell per token coloured by probability, hover alternatives, markup escaped."""

from __future__ import annotations

from explorer.plots.generation import next_token_figure, repetition_figure, tokens_figure
from explorer.tasks.generation.nexttoken import Candidate, NextToken
from explorer.tasks.generation.run import Generation
from explorer.tasks.generation.steps import Alternative, Step
from explorer.tasks.generation.strategy import DecodingSettings


def _gen(strategy: str, tokens: list[tuple[str, int, float]]) -> Generation:
    steps = tuple(Step(t, i, p, (Alternative(t, i, p), Alternative("<b>x</b>", 9, 0.01))) for t, i, p in tokens)
    return Generation("m", DecodingSettings(strategy), "prompt", "".join(t for t, _, _ in tokens), steps, True, 0.0)


def test_tokens_figure_has_one_row_per_strategy_padded_to_the_longest() -> None:
    fig = tokens_figure([_gen("greedy", [(" a", 1, 0.9), (" b", 2, 0.5)]), _gen("beam", [(" c", 3, 0.2)])])
    heat = fig.data[0]
    assert list(heat.y) == ["greedy", "beam"]
    assert [list(r) for r in heat.z] == [[0.9, 0.5], [0.2, None]]
    assert heat.text[0][0] == "▁a" and heat.zmin == 0 and heat.zmax == 1
    assert "&lt;b&gt;x&lt;/b&gt;" in heat.hovertext[0][0]  # a token that looks like markup stays text


def test_next_token_figure_puts_the_most_likely_on_top() -> None:
    result = NextToken("m", 100, True, 3, (Candidate(" Paris", 5, 3.0, 0.7), Candidate("<i>", 6, 1.0, 0.1)))
    bar = next_token_figure(result).data[0]
    assert list(bar.x) == [0.1, 0.7] and bar.y[-1].startswith("▁Paris") and "&lt;i&gt;" in bar.y[0]


def test_repetition_figure_has_two_curves_per_strategy() -> None:
    fig = repetition_figure([_gen("greedy", [(" a", 1, 0.9)] * 6), _gen("sample", [(" b", 2, 0.5)])])
    assert len(fig.data) == 4 and list(fig.data[0].y)[-1] > 0.5
