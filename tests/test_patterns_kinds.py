"""explorer.architecture.patterns.kinds: constructors check their parameters; BigBird's fallback picks the kind run."""

from __future__ import annotations

import pytest

from explorer.architecture import patterns as P
from explorer.architecture.modeltypes import bigbird_falls_back
from explorer.architecture.patterns import costs, kinds
from explorer.core.errors import ExplorerError


def test_bigbird_fallback_rule_matches_transformers() -> None:
    # BigBirdModel.forward: seq_length <= (5 + 2 * num_random_blocks) * block_size -> original_full
    assert bigbird_falls_back(704, 64, 3) and not bigbird_falls_back(705, 64, 3)
    short, long_ = kinds.block_sparse(704, 64, 3), kinds.block_sparse(705, 64, 3)
    assert kinds.effective_kind(short) == "full" and P.build_mask(short).all()
    assert kinds.effective_kind(long_) == "block-sparse" and not P.build_mask(long_).all()
    assert "falls back to full" in costs.describe(short)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: kinds.full(0), "between 1 and"),
        (lambda: kinds.causal(10**9), "between 1 and"),
        (lambda: kinds.full(12.5), "whole number"),
        (lambda: kinds.sliding_window(100, 7), "even"),
        (lambda: kinds.sliding_window(100, 8, (0, 100)), "outside the sequence"),
        (lambda: kinds.local_causal(10, 0), "at least 1"),
        (lambda: kinds.sliding_window(100, 8, (0,), dilation=0), "Dilation"),
        (lambda: kinds.block_sparse(100, 0, 3), "block_size"),
        (lambda: P.PatternSpec("diagonal", 4, 4).with_length(8), "Unknown pattern kind"),
    ],
)
def test_bad_parameters_raise_explorer_error(build, match: str) -> None:
    with pytest.raises(ExplorerError, match=match):
        build()
