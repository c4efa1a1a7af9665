"""explorer.architecture.layertree: layer trees, unique counts, sharing and ties, collapsed repeats."""

from __future__ import annotations

import pytest

from explorer.architecture import layertree
from tests.reference_configs import meta_model


@pytest.mark.parametrize("name", ["bert-base-uncased", "albert-base-v2", "t5-small", "gpt2",
                                  "microsoft__deberta-v3-base", "distilbert-base-uncased"])
def test_root_equals_the_unique_count(name: str) -> None:
    model, config = meta_model(name)
    assert layertree.layer_tree(model, config).params == model.num_parameters() == layertree.unique_params(model)


def test_every_parent_holds_at_least_its_children() -> None:
    model, config = meta_model("bert-base-uncased")
    for _, node in layertree.layer_tree(model, config).walk():
        assert node.params >= sum(c.params for c in node.children if c.repeat == 1 or node.repeat == 1)


def test_tied_lm_head_is_counted_once_unlike_torchinfo() -> None:
    from torchinfo import summary

    model, config = meta_model("bert-base-uncased", "mlm")
    ours = layertree.layer_tree(model, config).params
    theirs = summary(model, verbose=0).total_params
    assert ours == 109_514_298  # BertForMaskedLM, word embeddings = decoder weight
    assert theirs - ours == 30522 * 768  # torchinfo 1.8 counts the tied decoder matrix again
    index = layertree.index_parameters(model)
    assert index.aliases["cls.predictions.decoder.weight"] == "bert.embeddings.word_embeddings.weight"


def test_repeated_blocks_are_collapsed() -> None:
    model, config = meta_model("bert-base-uncased", "base")
    layers = [n for _, n in layertree.layer_tree(model, config).walk() if n.type == "BertLayer"]
    assert [(n.label, n.repeat, n.params) for n in layers] == [("0-11", 12, 12 * 7_087_872)]


def test_albert_shared_layer_is_used_twelve_times() -> None:
    model, config = meta_model("albert-base-v2")
    groups = [n for _, n in layertree.layer_tree(model, config).walk() if n.type == "AlbertLayerGroup"]
    assert len(groups) == 1 and groups[0].uses == 12 and groups[0].shared
