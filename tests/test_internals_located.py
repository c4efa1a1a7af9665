"""Every catalog variant's built model matches its anatomy card: every path the card names exists, for every layer
of every stack, as many blocks as the config's layers, projections as wide as the head and key/value head counts
say, and a model that does not match (or whose type has no card) is refused in words.

Built on the meta device at full size (shapes, no weights); a custom variant (Sentence-BERT, ColBERT, ELECTRA's
pair, ...) is checked through the transformers models it wraps."""

from __future__ import annotations

import pytest
import torch
import transformers as tf

from explorer.architecture import anatomy, build, catalog
from explorer.core.errors import ExplorerError
from explorer.internals import located


def _transformers_models(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The model itself when transformers built it, else the transformers models it wraps."""
    if isinstance(model, tf.PreTrainedModel):
        return [model]
    return [m for child in model.children() for m in _transformers_models(child)]


@pytest.mark.parametrize("key", catalog.keys())
def test_every_variant_matches_its_card(key: str) -> None:
    models = _transformers_models(build.build(key))
    assert models
    for model in models:
        found = located.locate(model)
        assert located.mismatches(model, found) == [], key
        assert found.prefix in ("", f"{type(model).base_model_prefix}.")  # the card's prefix is transformers' own
        assert (found.card.model_type, found.card.family) == (catalog.get_variant(key).model_type,
                                                              catalog.get_variant(key).family)
        shape = found.shape(found.card.main.name)
        out = located.io_widths(found.at(found.card.main.block.attention.out, shape.layers - 1))
        assert out is None or out[0] == shape.heads * shape.head_width


def test_the_stacks_a_model_has_and_its_head() -> None:
    with torch.device("meta"):
        t5 = tf.T5ForConditionalGeneration(build.make_config("t5-small"))
        causal = tf.BartForCausalLM(build.make_config("bart-base"))
        bare = tf.BertModel(build.make_config("bert-base"))
    assert located.locate(t5).stacks == ("encoder", "decoder") and located.locate(t5).head == "linear"
    assert located.locate(causal).stacks == ("decoder",)  # a decoder-only wrapper of an encoder-decoder
    assert (located.locate(bare).prefix, located.locate(bare).head) == ("", None)


def test_a_model_whose_modules_do_not_match_its_card_is_refused_in_words() -> None:
    with torch.device("meta"):
        gpt2 = tf.GPT2LMHeadModel(build.make_config("gpt2"))
    with pytest.raises(ExplorerError, match=r"gpt2 model's modules do not match the BERT anatomy card"):
        located.locate(gpt2, anatomy.card_of("bert"))
    gpt2.transformer.h = gpt2.transformer.h[:3]  # an edited checkpoint: 3 blocks where its config says 12
    with pytest.raises(ExplorerError, match="do not match its anatomy card .the config says 12 layers"):
        located.locate(gpt2)


def test_a_type_without_a_card_and_a_module_without_a_config_are_refused() -> None:
    llama = tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=16, hidden_size=8, intermediate_size=16,
                                               num_hidden_layers=1, num_attention_heads=2))
    with pytest.raises(ExplorerError, match="no anatomy card for model type 'llama'"):
        located.locate(llama)
    with pytest.raises(ExplorerError, match="not a transformers model"):
        located.locate(torch.nn.Linear(2, 2))


def test_an_albert_of_several_groups_is_not_one_shared_layer() -> None:
    config = build.make_config("albert-base")
    config.num_hidden_groups = 2
    with torch.device("meta"):
        albert = tf.AlbertForMaskedLM(config)
    with pytest.raises(ExplorerError, match="holds 2 modules, not one shared layer"):
        located.locate(albert)
