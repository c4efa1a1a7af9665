"""explorer.compression.heads: the proxy ranks heads by their output-projection slice; pruning zeroes exactly
the slices of the lowest N%; models without heads get a clear message."""

from __future__ import annotations

import pytest
import torch

from explorer.compression import heads
from explorer.core.errors import ExplorerError


def _tiny_bert():
    from transformers import BertConfig, BertModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return BertModel(BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                    intermediate_size=64, vocab_size=100)).eval()


def test_head_norms_are_the_column_blocks() -> None:
    layer = torch.nn.Linear(8, 3)
    with torch.no_grad():
        layer.weight.zero_()
        layer.weight[:, 4:] = 1.0  # head 1 (columns 4..7) only
    assert heads.head_norms(layer, 2).tolist() == [0.0, pytest.approx(12 ** 0.5)]


def test_scores_cover_every_head_lowest_first() -> None:
    model = _tiny_bert()
    s = heads.scores(model)
    assert len(s) == 2 * 4 and [x.score for x in s] == sorted(x.score for x in s)
    assert all(x.layer.endswith("attention.output.dense") for x in s)


@pytest.mark.parametrize("percent, gone", [(0, 0), (25, 2), (50, 4), (99, 7)])
def test_prune_zeroes_the_lowest_heads_only(percent: int, gone: int) -> None:
    model = _tiny_bert()
    ranked = heads.scores(model)
    removed = heads.prune(model, percent)
    assert removed == ranked[:gone]
    layers = heads.output_projections(model)
    for s in ranked:
        block = layers[s.layer].weight[:, s.head * 8:(s.head + 1) * 8]
        assert bool((block == 0).all()) == (s in removed)


def test_the_tiny_gemma_has_its_query_heads_found() -> None:
    from transformers import Gemma3ForCausalLM

    from tests.tiny_gemma import tiny_gemma_config

    model = Gemma3ForCausalLM(tiny_gemma_config(300, 0)).eval()
    assert len(heads.scores(model)) == 3 * 2  # 3 layers x 2 query heads (one shared key/value head)


def test_a_model_without_attention_is_refused() -> None:
    with pytest.raises(ExplorerError, match="prune-N"):
        heads.prune(torch.nn.Sequential(torch.nn.Linear(4, 4)), 50)
