"""explorer.internals.forward.align: two walks lined up by kind at the same relative depth, and the stream's
norms after the embeddings and every layer (the tiny Gemma beside a tiny BERT, both walked for real)."""

from __future__ import annotations

import pytest

from explorer.internals.forward import align
from explorer.internals.forward.run import run
from explorer.runtime.resolve import resolve
from tests.tiny_gemma import save_tiny_gemma
from tests.tiny_models import save_tiny


@pytest.fixture(scope="module")
def walks(tmp_path_factory):
    root = tmp_path_factory.mktemp("align")
    gemma = run(resolve(str(save_tiny_gemma(root / "gemma")), None), "The cat sat on", device="cpu")
    bert = run(resolve(str(save_tiny("bert-base", root / "bert")), None), "The cat sat on", device="cpu")
    return gemma, bert


def test_a_step_lines_up_with_the_same_kind_at_the_same_depth(walks) -> None:
    gemma, bert = walks
    for i, step in enumerate(gemma.steps):
        j = align.counterpart(gemma, i, bert)
        if j is None:
            assert not any(s.kind == step.kind and s.layer is not None for s in bert.steps) or step.layer is None \
                or step.kind in ("position", "norm"), step.name
            continue
        other = bert.steps[j]
        assert other.kind == step.kind and (other.layer is None) == (step.layer is None)
        if step.layer is not None:
            assert other.layer == align.relative_layer(step.layer, 3, align.layer_count(bert, other.stack))
    rotated = next(i for i, s in enumerate(gemma.steps) if s.kind == "position")
    assert align.counterpart(gemma, rotated, bert) is None  # BERT rotates nothing inside its layers


def test_the_stream_is_read_after_the_embeddings_and_every_layer(walks) -> None:
    gemma, bert = walks
    for walk in walks:
        points = align.stream(walk)
        layers = align.layer_count(walk, walk.card.main.name)
        assert [p.layer for p in points] == [None, *range(layers)]
        assert all(len(p.token_norms) == len(walk.tokens) for p in points)
        last = walk.steps[points[-1].step]
        after = walk.steps[points[-1].step + 1:]
        assert last.layer == layers - 1 and all(s.layer is None for s in after)  # then the readout, if any
