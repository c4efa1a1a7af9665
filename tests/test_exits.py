"""explorer.training.exits: FastBERT's exits. Adaptive inference (layer by layer, stopping early through the
hooks) answers what :func:`decide` computes from every layer at once, for every family's encoder; it really
skips the later layers; the model given is never changed; a run is seeded; saving and loading give the same
distributions; damaged or missing exits are messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.training import checkpoint, downstream, exits, lossfamilies, recipes
from tests.conftest import QUICK_EXITS

QUICK = exits.ExitSpec(**QUICK_EXITS)


def _build(objective: str) -> torch.nn.Module:
    recipe = recipes.get(objective)
    return lossfamilies.get(recipe.loss).build(recipe, "tiny", 0, "cpu")


@pytest.fixture(scope="module")
def trained() -> tuple[exits.Exits, exits.Report, torch.nn.Module]:
    model = _build("mlm")
    ex, report = exits.train(model, QUICK)
    return ex, report, model


def test_uncertainty_is_normalised_entropy() -> None:
    assert float(exits.uncertainty(torch.tensor([0.5, 0.5]))) == pytest.approx(1.0)
    assert float(exits.uncertainty(torch.tensor([1.0, 0.0]))) == pytest.approx(0.0, abs=1e-6)
    p = torch.softmax(torch.randn(100, 2), -1)
    u = exits.uncertainty(p)
    assert bool(((u >= 0) & (u <= 1 + 1e-6)).all())


def test_decide_speed_zero_is_the_teacher_and_higher_speeds_exit_sooner() -> None:
    probs = torch.softmax(torch.randn(4, 50, 2), -1)  # (L, N, C)
    full = exits.decide(probs, 0.0)
    assert bool((full.layers == 4).all()) and torch.equal(full.predictions, probs[-1].argmax(-1))
    assert bool((exits.decide(probs, 1.01).layers == 1).all())  # every student is sure enough
    means = [exits.decide(probs, s).mean_layers for s in (0.0, 0.3, 0.6, 0.9, 1.01)]
    assert means == sorted(means, reverse=True)
    d = exits.decide(probs, 0.5)  # each answer is the distribution of the layer it left at
    for n in range(50):
        layer = int(d.layers[n])
        assert int(d.predictions[n]) == int(probs[layer - 1, n].argmax())
        assert layer == 4 or float(exits.uncertainty(probs[layer - 1, n])) < 0.5


@pytest.mark.parametrize("objective", ["mlm", "albert", "gpt", "t5"])
def test_adaptive_inference_answers_what_decide_computes(objective) -> None:
    spec = exits.ExitSpec(steps=4, distill_steps=4, batch=8, seq_len=32, test_examples=16)
    ex, report = exits.train(_build(objective), spec)
    assert len(report.layer_accuracy) == ex.layers == 2
    test = exits.test_examples(spec)
    probs = exits.probabilities(ex, test)
    for speed in (0.0, 0.5, 0.9, 1.01):
        d = exits.decide(probs, speed)
        for n, e in enumerate(test):
            if abs(float(exits.uncertainty(probs[0, n])) - speed) < 1e-4:
                continue  # a tie at the threshold may round either way
            ids, mask, _ = downstream.tensors([e], torch.device("cpu"))
            label, layer, _ = exits.adaptive(ex, ids, mask, speed)
            assert (label, layer) == (int(d.predictions[n]), int(d.layers[n])), (objective, speed, n)


def test_an_early_exit_really_skips_the_later_layers(trained) -> None:
    ex, _, _ = trained
    ran: list[int] = []
    handles = [m.register_forward_hook(lambda *_a, i=i: ran.append(i)) for i, m in enumerate(ex.layer_modules())]
    ids, mask = exits.encode("Return a new sorted list from the items in iterable.", 32, "cpu")
    try:
        assert exits.adaptive(ex, ids, mask, 1.01)[1] == 1
        assert ran == [0]  # the second layer never ran
        ran.clear()
        assert exits.adaptive(ex, ids, mask, 0.0)[1] == 2 and ran == [0, 1]
    finally:
        for h in handles:
            h.remove()
    with pytest.raises(ExplorerError, match="one example"):
        exits.adaptive(ex, ids.repeat(2, 1), mask.repeat(2, 1), 0.5)


def test_the_model_given_is_not_changed_and_a_seed_repeats_a_run(trained) -> None:
    model = _build("mlm")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    _, report = exits.train(model, QUICK)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert report.layer_accuracy == trained[1].layer_accuracy  # same seed, same model, same exits
    assert all(0.0 <= a <= 1.0 for a in report.layer_accuracy) and report.n_test == QUICK.test_examples


def test_the_task_is_learnt() -> None:
    """Even from random weights the task is learnable (about 80% with the default budget, measured): the exits
    have something to be sure about."""
    spec = exits.ExitSpec(steps=60, distill_steps=10, batch=16, seq_len=64, test_examples=128)
    _, report = exits.train(_build("mlm"), spec)
    assert report.layer_accuracy[-1] > 0.6


def test_saved_exits_load_with_the_same_distributions(trained, tmp_path) -> None:
    ex, report, model = trained
    folder = tmp_path / "ckpt"
    model.save_pretrained(folder)
    exits.save(ex, report, folder)
    assert checkpoint.has_exits(folder)
    loaded, meta = exits.load(folder)
    test = exits.test_examples(QUICK)[:16]
    assert torch.allclose(exits.probabilities(loaded, test), exits.probabilities(ex, test), atol=1e-6)
    assert meta["layer_accuracy"] == [round(a, 4) for a in report.layer_accuracy] and meta["layers"] == 2


def test_missing_and_damaged_exits_are_messages(trained, tmp_path) -> None:
    ex, report, model = trained
    folder = tmp_path / "ckpt"
    with pytest.raises(ExplorerError, match="not a saved model"):
        exits.save(ex, report, folder.parent / "nothing")
    model.save_pretrained(folder)
    with pytest.raises(ExplorerError, match="no early-exit classifiers"):
        exits.load(folder)
    exits.save(ex, report, folder)
    meta = folder / checkpoint.EXITS / "exits.json"
    meta.write_text("{not json", encoding="utf-8")
    with pytest.raises(ExplorerError):
        exits.load(folder)
    meta.write_text(json.dumps({"layers": 2}), encoding="utf-8")
    with pytest.raises(ExplorerError, match="damaged"):
        exits.load(folder)
    exits.save(ex, report, folder)
    state = torch.load(folder / checkpoint.EXITS / "exits.pt", weights_only=True)
    state["classifiers.9.extra"] = torch.zeros(1)
    torch.save(state, folder / checkpoint.EXITS / "exits.pt")
    with pytest.raises(ExplorerError, match="do not match"):
        exits.load(folder)


def test_a_one_layer_model_is_refused() -> None:
    recipe = recipes.get("distilbert")  # the tiny student has one layer
    teacher = _build("mlm")
    student = lossfamilies.get(recipe.loss).build(recipe, "tiny", 0, "cpu", teacher=teacher)
    with pytest.raises(ExplorerError, match="at least two layers"):
        exits.wrap(student)


def test_settings_out_of_range_are_refused() -> None:
    with pytest.raises(ExplorerError, match="out of range"):
        exits.ExitSpec(steps=0).checked()


def test_a_failed_save_leaves_the_earlier_exits(trained, tmp_path, monkeypatch) -> None:
    ex, report, model = trained
    folder = Path(tmp_path / "ckpt")
    model.save_pretrained(folder)
    exits.save(ex, report, folder)
    before = (folder / checkpoint.EXITS / "exits.pt").read_bytes()

    def boom(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(exits.torch, "save", boom)
    with pytest.raises(ExplorerError, match="No space left"):
        exits.save(ex, report, folder)
    assert (folder / checkpoint.EXITS / "exits.pt").read_bytes() == before
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []
