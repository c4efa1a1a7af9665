"""explorer.architecture.treetable: the torchinfo-style text table of a layer tree."""

from __future__ import annotations

from explorer.architecture import layertree, shapes, treetable
from tests.reference_configs import meta_model


def test_text_tree_golden(golden) -> None:
    model, config = meta_model("bert-base-uncased", "pretraining")
    traced, note = shapes.trace_shapes(model, config, 16)
    text = treetable.text_tree(layertree.layer_tree(model, config, traced), 3)
    golden("bert-base-uncased-pretraining.txt", text + "\n")


def test_labels_show_repeats_sharing_and_ties() -> None:
    model, config = meta_model("bert-base-uncased", "base")
    text = treetable.text_tree(layertree.layer_tree(model, config))
    assert "12 x BertLayer: 0-11" in text and "Total params (unique, tied counted once): 109,482,240" in text
    model, config = meta_model("albert-base-v2")
    assert "AlbertLayerGroup: 0 (shared, used 12x)" in treetable.text_tree(layertree.layer_tree(model, config))
