"""Ablation's oracles: zero-ablating a head (or a neuron, or a layer) equals the model with that head's output
projection columns (the neuron's down-projection column, the layer itself) removed in a deep copy of the weights;
the mean is the reference text's; the head ranking's effects are single ablations; the gradient importance is the
Compression lab's; bad components get one message."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from explorer.compression import heads as compression_heads
from explorer.core.errors import ExplorerError
from explorer.internals import sites
from explorer.interventions import ablation, components, prompts, ranking, stacks, traces
from explorer.interventions.engine import engine_for
from explorer.interventions.models import local_ref
from explorer.runtime import loading
from explorer.runtime.resolve import resolve
from tests.tiny_gemma import load_tiny_gemma
from tests.tiny_models import save_tiny

TEXT = "The Eiffel Tower is in the city of ___."


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, loading.LoadedModel]:
    root = tmp_path_factory.mktemp("ablation")
    out = {"decoder": load_tiny_gemma(root / "gemma", device="cpu")}
    for kind, task in (("bert", "masked-lm"), ("bart", "seq2seq")):
        out[kind] = loading.load_model(resolve(str(save_tiny(kind, root / kind))), task, device="cpu")
    return out


def _reference_probs(loaded, edit) -> torch.Tensor:
    """The next-token distribution of a deep copy of the weights after ``edit(copy, sites)``: (V,)."""
    model = copy.deepcopy(loaded.model)
    s, _ = stacks.stack_sites(model)
    with torch.no_grad():
        edit(model, s)
        prompt = prompts.read(loaded.tokenizer, model.config, TEXT, s.family)
        x = {"input_ids": torch.tensor([prompt.ids])}
        if prompt.decoder_ids is not None:
            x["decoder_input_ids"] = torch.tensor([prompt.decoder_ids])
        return torch.softmax(model(**x).logits[0, prompt.readout].float(), -1)


def _zero_columns(path_of, first: int, last: int):
    def edit(model, s) -> None:
        sites.module(model, path_of(s)).weight[:, first:last] = 0
    return edit


@pytest.mark.parametrize("kind", ["decoder", "bert", "bart"])
def test_zero_ablating_a_head_equals_zeroing_its_output_projection_columns(models, kind: str) -> None:
    loaded = models[kind]
    done = ablation.ablate_loaded(loaded, TEXT, components.parse("head", "1.1"))
    width = stacks.stack_sites(loaded.model)[0].head_width
    expected = _reference_probs(loaded, _zero_columns(lambda s: s.heads_in(1), width, 2 * width))
    assert math.isclose(done.target_after, float(expected[done.target_id]), rel_tol=1e-4, abs_tol=1e-9)
    assert done.kl >= 0 and (done.kl > 0 or kind == "bart")  # tiny BART's answer is near-uniform: a tiny change


def test_zero_ablating_a_neuron_equals_zeroing_its_down_projection_column(models) -> None:
    loaded = models["decoder"]
    done = ablation.ablate_loaded(loaded, TEXT, components.parse("neuron", "0.7"))
    expected = _reference_probs(loaded, _zero_columns(lambda s: s.neurons_in(0), 7, 8))
    assert math.isclose(done.target_after, float(expected[done.target_id]), rel_tol=1e-4)


def test_zero_ablating_a_layer_skips_it(models) -> None:
    loaded = models["decoder"]
    done = ablation.ablate_loaded(loaded, TEXT, components.parse("layer", "1"))

    def skip(model, s) -> None:  # the block's contribution gone: its output is its input
        block = sites.module(model, s.block(1))
        block.forward = lambda hidden_states, *args, **kwargs: hidden_states  # type: ignore[method-assign]

    expected = _reference_probs(loaded, skip)
    assert math.isclose(done.target_after, float(expected[done.target_id]), rel_tol=1e-4)


def test_mean_ablation_uses_the_reference_texts_mean(models) -> None:
    loaded = models["decoder"]
    engine = engine_for(loaded.model)
    s = engine.sites
    ref = ablation.reference(engine, loaded.tokenizer, s.family)
    hooked: list[torch.Tensor] = []
    handle = sites.module(loaded.model, s.mlp(1)).register_forward_hook(lambda _m, _a, out: hooked.append(out))
    try:
        with torch.no_grad():
            loaded.model(input_ids=torch.tensor([ref.ids]))
    finally:
        handle.remove()
    special = set(loaded.tokenizer.all_special_ids)
    keep = torch.tensor([i not in special for i in ref.ids])
    like = torch.zeros(3, s.d_model)
    with engine.session():
        mean = ablation.replacement(engine, s, components.parse("block", "1.mlp"), "mean", like, loaded.tokenizer)
    assert torch.allclose(mean[0], hooked[0][0][keep].mean(0), atol=1e-6) and mean.shape == like.shape
    zero, mean_done = (ablation.ablate_loaded(loaded, TEXT, components.parse("block", "1.mlp"), mode=m)
                       for m in ("zero", "mean"))
    assert zero.target_after != mean_done.target_after


def test_the_head_ranking_is_single_ablations_beside_the_compression_labs_importance(models) -> None:
    loaded = models["decoder"]
    ranked = ranking.rank_heads(loaded, TEXT, "Paris", None)
    assert ranked.metric == "prob" and len(ranked.heads) == 3 * 2
    assert [abs(h.effect) for h in ranked.heads] == sorted((abs(h.effect) for h in ranked.heads), reverse=True)
    one = ablation.ablate_loaded(loaded, TEXT, components.Component("head", 2, 0), target="Paris")
    h20 = next(h for h in ranked.heads if (h.layer, h.head) == (2, 0))
    assert math.isclose(h20.effect, one.change, abs_tol=1e-7)
    theirs = copy.deepcopy(loaded.model)  # the Compression lab's own measurement, on a copy it may change
    ids = loaded.tokenizer(compression_heads.importance_text(), return_tensors="pt")["input_ids"]
    expected = {(int(r.layer.split(".")[2]), r.head): r.score
                for r in compression_heads.gradient_scores(theirs, ids[:, :ranking._importance_tokens(theirs)])}
    assert all(math.isclose(h.importance or 0.0, expected[(h.layer, h.head)], rel_tol=1e-4) for h in ranked.heads)
    assert ranked.spearman is not None and -1.0 <= ranked.spearman <= 1.0
    assert all(p.grad is None for p in loaded.model.parameters())  # the shared model got no gradient


@pytest.mark.parametrize("kind,spec,pattern", [
    ("head", "3.0", "Layer 3 is out of range: this model has layers 0 to 2"),
    ("head", "1.2", "Head 2 is out of range: this model has heads 0 to 1"),
    ("neuron", "0.64", "Neuron 64 is out of range"),
    ("head", "one.two", "A head is written LAYER.HEAD"),
    ("block", "1.ffn", "LAYER.attn or LAYER.mlp"),
])
def test_bad_components_get_one_message(models, kind: str, spec: str, pattern: str) -> None:
    with pytest.raises(ExplorerError, match=pattern):
        ablation.ablate_loaded(models["decoder"], TEXT, components.parse(kind, spec))


def test_bad_ablation_inputs(models) -> None:
    with pytest.raises(ExplorerError, match="text is empty"):
        ablation.ablate_loaded(models["decoder"], " ", components.parse("head", "0.0"))
    with pytest.raises(ExplorerError, match="Unknown ablation mode"):
        ablation.ablate(resolve("gemma3-270m"), TEXT, components.parse("head", "0.0"), mode="half")
    with pytest.raises(ExplorerError, match="served by an inference engine"):
        ablation.ablate(local_ref("served:x"), TEXT, components.parse("head", "0.0"))


def test_ablation_reads_where_each_family_answers(models) -> None:
    for kind in ("bert", "bart"):
        done = ablation.ablate_loaded(models[kind], TEXT, components.parse("block", "0.attn"))
        assert len(done.before) == ablation.TOP_K and done.to_dict()["component"] == "layer 0 attention"
    assert traces.SITE_LABELS["layer"] == "whole layer"
