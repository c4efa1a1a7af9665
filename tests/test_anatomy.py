"""explorer.architecture.anatomy: layer trees, unique counts, sharing and ties, memory per precision, shapes on meta."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.architecture import anatomy, build

REF = Path(__file__).resolve().parents[1] / "assets" / "configs"


def _model(name: str, head: str | None = None):
    config = build.config_from_dict(json.loads((REF / f"{name}.json").read_text()))
    return build.instantiate(config, head or build.default_head(config)), config


@pytest.mark.parametrize("name", ["bert-base-uncased", "albert-base-v2", "t5-small", "gpt2",
                                  "microsoft__deberta-v3-base", "distilbert-base-uncased"])
def test_root_equals_unique_count_and_categories_partition_it(name: str) -> None:
    model, config = _model(name)
    tree = anatomy.layer_tree(model, config)
    parts = anatomy.breakdown(model, config)
    assert tree.params == model.num_parameters() == sum(parts.values())
    assert "other" not in parts


def test_every_parent_holds_at_least_its_children() -> None:
    model, config = _model("bert-base-uncased")
    for _, node in anatomy.layer_tree(model, config).walk():
        assert node.params >= sum(c.params for c in node.children if c.repeat == 1 or node.repeat == 1)


def test_tied_lm_head_is_counted_once_unlike_torchinfo() -> None:
    from torchinfo import summary

    model, config = _model("bert-base-uncased", "mlm")
    ours = anatomy.layer_tree(model, config).params
    theirs = summary(model, verbose=0).total_params
    assert ours == 109_514_298  # BertForMaskedLM, word embeddings = decoder weight
    assert theirs - ours == 30522 * 768  # torchinfo 1.8 counts the tied decoder matrix again
    index = anatomy.index_parameters(model)
    assert index.aliases["cls.predictions.decoder.weight"] == "bert.embeddings.word_embeddings.weight"


def test_repeated_blocks_are_collapsed() -> None:
    model, config = _model("bert-base-uncased", "base")
    labels = [anatomy._label(n) for _, n in anatomy.layer_tree(model, config).walk()]
    assert "12 x BertLayer: 0-11" in labels


def test_albert_shared_layer_is_used_twelve_times() -> None:
    model, config = _model("albert-base-v2")
    groups = [n for _, n in anatomy.layer_tree(model, config).walk() if n.type == "AlbertLayerGroup"]
    assert len(groups) == 1 and groups[0].uses == 12 and groups[0].shared






def test_categories_cover_bert_exactly() -> None:
    model, config = _model("bert-base-uncased", "pretraining")
    parts = anatomy.breakdown(model, config)
    assert parts["token embeddings"] == 30522 * 768
    assert parts["position embeddings"] == 512 * 768
    assert parts["token-type embeddings"] == 2 * 768
    assert parts["attention Q/K/V/O"] == 12 * 4 * (768 * 768 + 768)
    assert parts["feed-forward"] == 12 * (2 * 768 * 3072 + 3072 + 768)
    assert parts["pooler"] == 768 * 768 + 768
    assert parts["head: NSP/SOP"] == 2 * 768 + 2


def test_t5_relative_bias_and_cross_attention() -> None:
    model, config = _model("t5-small")
    parts = anatomy.breakdown(model, config)
    assert parts["relative position"] == 2 * 32 * 8  # one bias table per stack
    assert parts["cross-attention"] == 6 * 4 * 512 * 512


def test_memory_per_precision() -> None:
    mem = anatomy.memory_bytes(1000)
    assert (mem["fp32"], mem["fp16"], mem["int8"], mem["train_fp32_adam"]) == (4000, 2000, 1000, 16000)




def test_shapes_on_meta_and_text_tree_golden(golden) -> None:
    model, config = _model("bert-base-uncased", "pretraining")
    shapes, note = anatomy.trace_shapes(model, config, 16)
    assert note == "" and shapes["bert.encoder.layer.0"] == (1, 16, 768)
    text = anatomy.text_tree(anatomy.layer_tree(model, config, shapes), 3)
    golden("bert-base-uncased-pretraining.txt", text + "\n")


def test_shape_tracing_restores_torch_and_covers_the_catalog() -> None:
    import torch

    from explorer.architecture import analysis, catalog

    missing = [k for k in catalog.keys() if k.startswith(("bart", "t5-small", "bigbird", "xlm", "bert2bert"))
               and analysis.analyse_variant(k, seq_len=8).notes]
    assert missing == []
    assert torch.tensor(3).item() == 3 and bool(torch.tensor(0)) is False
    with pytest.raises(RuntimeError):
        torch.zeros(1, device="meta").item()
