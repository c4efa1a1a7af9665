"""The decoder's fill-mask column per device and dtype: the prefix-cached scoring equals whole-text forwards on
the same weights and dtype, and the column comes out of ``fill_mask`` for the device it ran on."""

from __future__ import annotations

import pytest

from explorer.tasks import fillmask as fm
from explorer.tasks.causal.fill import causal_fill
from explorer.tasks.causal.scoring import PrefixScorer, naive_scores
from tests.gpu.conftest import PLACES, TOLERANCE
from tests.gpu.peaked import place

PREFIX = [50256, 464, 3139, 286, 4881, 318, 262, 3139, 286]  # longer than the sliding window (4)


@pytest.mark.parametrize("where", PLACES)
def test_prefix_cache_equals_naive_scoring(peaked_dir, where) -> None:
    lm = place(peaked_dir("gemma"), *where, "gemma")
    middles = [(int(i),) for i in range(100, 120)] + [(11, 12, 13), (7,)]
    fast = PrefixScorer(lm.model, PREFIX).scores(middles, [286, 4881, 13])
    slow = naive_scores(lm.model, PREFIX, middles, [286, 4881, 13])
    # sums of ~12 log-probabilities whose logits are scaled x40 (tests/gpu/peaked.py)
    assert fast == pytest.approx(slow, abs=TOLERANCE[where[1]] * 100)


@pytest.mark.parametrize("where", PLACES)
def test_column_runs_where_the_model_is(peaked_dir, where) -> None:
    lm = place(peaked_dir("gemma"), *where, "gemma")
    fill = causal_fill(lm, "The cat sat on the ___ today.", top_k=5, candidates=20, answer_tokens=2)
    assert len(fill.blanks[0].by_whole) == 5 and sum(c.share for c in fill.blanks[0].by_whole) <= 1 + 1e-6
    out = fm.fill_mask(["gemma3-270m"], "The cat sat on the [MASK].", 3, loader=lambda spec, task, **kw: lm)
    assert not out.errors and out.models[0].device == where[0]
