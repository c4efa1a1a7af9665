"""Next-token table: probabilities are the softmax of the model's logits; tying is read off the model."""

from __future__ import annotations

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.runtime.resolve import resolve
from explorer.tasks.generation.nexttoken import forward_last, next_token, output_is_input_embedding
from tests.tiny_gemma import load_tiny_gemma, tiny_gemma_config


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return load_tiny_gemma(tmp_path_factory.mktemp("gemma"), device="cpu")  # float32 tolerances (tests/gpu: per device)


def test_probabilities_equal_softmax_of_the_model_logits(tiny) -> None:
    result = next_token(tiny, "The cat sat on the", top_k=20)
    ids = torch.tensor([tiny.tokenizer("The cat sat on the")["input_ids"]])
    with torch.inference_mode():
        logits = tiny.model(ids).logits[0, -1].float()
    probs = logits.softmax(-1)
    assert result.vocab_size == logits.shape[-1] == 50257
    for cand in result.candidates:
        assert cand.probability == pytest.approx(float(probs[cand.token_id]), abs=1e-5)
        assert cand.logit == pytest.approx(float(logits[cand.token_id]), abs=1e-4)
    assert [c.token_id for c in result.candidates] == probs.topk(20).indices.tolist()


def test_tied_output_is_checked_on_the_tensors(tiny) -> None:
    assert output_is_input_embedding(tiny.model)
    assert next_token(tiny, "Hi", 3).tied_output
    from transformers import Gemma3ForCausalLM

    config = tiny_gemma_config(100, 0)
    config.tie_word_embeddings = False
    untied = Gemma3ForCausalLM(config)
    assert not output_is_input_embedding(untied)


def test_cached_forward_matches_a_full_forward(tiny) -> None:
    ids = torch.tensor([tiny.tokenizer("one two three four five")["input_ids"]])
    with torch.inference_mode():
        _, cache = forward_last(tiny.model, ids[:, :-1])
        last, _ = forward_last(tiny.model, ids[:, -1:], cache)
        full = tiny.model(ids).logits[:, -1].float()
    assert torch.allclose(last, full, atol=1e-5)


@pytest.mark.parametrize("k", [0, 101, True, "5"])
def test_bad_top_k_is_refused(tiny, k) -> None:
    with pytest.raises(ExplorerError, match="top-k"):
        next_token(tiny, "Hi", k)


def test_json_keys_and_truncation_notice(tiny) -> None:
    result = next_token(tiny, "word " * 10_000, 3)
    assert list(result.to_dict()) == ["model", "vocab_size", "device", "device_name", "dtype", "tokens"]
    assert [n.kind for n in result.notices] == ["truncated"]
    assert result.prompt_tokens == 256  # the tiny model's max_position_embeddings


@pytest.mark.slow
def test_real_gemma_predicts_france_and_ties_its_output_layer() -> None:
    from explorer.tasks.generation import load_decoder

    loaded = load_decoder(resolve("gemma3-270m"))  # converts once per machine, then loads from the models cache
    result = next_token(loaded, "Paris is the capital of", 5)
    assert result.vocab_size == 262_144 and result.tied_output
    assert result.candidates[0].token == " France" and result.candidates[0].probability > 0.5
