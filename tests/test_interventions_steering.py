"""Steering's oracles: a coefficient of 0 gives exactly the unsteered greedy text (and transformers' own greedy
generate), the same seed gives the same sample, the direction is the difference of means plain hooks read; a
steered run changes the text; bad settings get one message before any work."""

from __future__ import annotations

import math

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.internals import sites
from explorer.interventions import models, steering
from explorer.interventions.engine import engine_for
from explorer.runtime import loading
from explorer.runtime.resolve import resolve
from tests.tiny_gemma import load_tiny_gemma
from tests.tiny_models import save_tiny

PROMPT = "The Eiffel Tower is"


@pytest.fixture(scope="module")
def decoder(tmp_path_factory) -> loading.LoadedModel:
    return load_tiny_gemma(tmp_path_factory.mktemp("steering") / "gemma", device="cpu")


def test_coefficient_zero_gives_exactly_the_unsteered_greedy_text(decoder) -> None:
    result = steering.steer_loaded(decoder, PROMPT, ["Love"], ["Hate"], layer=1, coefficient=0.0, max_new_tokens=8)
    ids = decoder.tokenizer(PROMPT, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        generated = decoder.model.generate(ids, max_new_tokens=8, do_sample=False)
    reference = decoder.tokenizer.decode(generated[0, ids.shape[1]:], skip_special_tokens=True)
    assert result.text == result.unsteered == reference and result.strategy == "greedy"


def test_a_seeded_sample_is_the_same_with_coefficient_zero(decoder) -> None:
    runs = [steering.steer_loaded(decoder, PROMPT, ["Love"], ["Hate"], layer=2, coefficient=0.0, max_new_tokens=8,
                                  strategy="sample", seed=seed) for seed in (3, 3, 4)]
    assert runs[0].text == runs[0].unsteered == runs[1].text
    assert runs[0].unsteered != runs[2].unsteered  # another seed, another sample (a near-uniform tiny model)


def test_steering_changes_the_text(decoder) -> None:
    result = steering.steer_loaded(decoder, PROMPT, ["Love"], ["Hate"], layer=1, coefficient=40.0, max_new_tokens=8)
    assert result.text != result.unsteered and result.to_dict()["text"] == result.text


def test_the_direction_is_the_difference_of_means_plain_hooks_read(decoder) -> None:
    engine = engine_for(decoder.model)
    s = engine.sites

    def mean(text: str) -> torch.Tensor:
        seen: list[torch.Tensor] = []
        handle = sites.module(decoder.model, s.block(1)).register_forward_hook(
            lambda _m, _a, out: seen.append(sites.first(out)))
        try:
            with torch.no_grad():
                decoder.model(**decoder.tokenizer(text, return_tensors="pt"))
        finally:
            handle.remove()
        return seen[0][0].mean(0)  # GPT-2's vocabulary adds no special token here

    with engine.session():
        ours = steering.direction(engine, s, 1, decoder.tokenizer, ["I love it", "Love"], ["I hate it"])
    expected = (mean("I love it") + mean("Love")) / 2 - mean("I hate it")
    assert torch.allclose(ours, expected, atol=1e-6)


@pytest.mark.parametrize("kwargs,pattern", [
    ({"coefficient": math.inf}, "coefficient must be a finite number"),
    ({"coefficient": math.nan}, "coefficient must be a finite number"),
    ({"layer": 3}, "Layer 3 is out of range"),
    ({"positive": []}, "positive prompts are empty"),
    ({"negative": ["  "]}, "negative prompts are empty"),
    ({"max_new_tokens": 0}, "max_new_tokens must be a whole number"),
    ({"strategy": "beam"}, "Unknown strategy"),
])
def test_bad_settings_get_one_message(decoder, kwargs, pattern: str) -> None:
    settings = {"positive": ["Love"], "negative": ["Hate"], "layer": 1, "coefficient": 1.0, **kwargs}
    with pytest.raises(ExplorerError, match=pattern):
        steering.steer_loaded(decoder, PROMPT, **settings)


def test_steering_needs_a_decoder_and_a_local_model(tmp_path) -> None:
    encoder = loading.load_model(resolve(str(save_tiny("bert", tmp_path / "bert"))), "masked-lm", device="cpu")
    with pytest.raises(ExplorerError, match="pick a decoder"):
        steering.steer_loaded(encoder, PROMPT, ["Love"], ["Hate"], layer=0, coefficient=1.0)
    with pytest.raises(ExplorerError, match="served by an inference engine"):
        steering.steer(models.local_ref("served:x"), PROMPT, ["Love"], ["Hate"], layer=0, coefficient=1.0)
    with pytest.raises(ExplorerError, match="coefficient must be a finite number"):  # before any model loads
        steering.steer(resolve("gemma3-270m"), PROMPT, ["Love"], ["Hate"], layer=0, coefficient=math.inf)
