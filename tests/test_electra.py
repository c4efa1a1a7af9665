"""explorer.training.electra: generator + discriminator, shared embeddings, MLM + 50 x RTD, tiny runs."""

from __future__ import annotations

import math

import pytest
import torch

from explorer import objectives
from explorer.training import batches, electra, examples, lossfamilies, recipes, trainer, vocab
from explorer.training.examples import IGNORE

TINY = {"batch_tokens": 256, "seq_len": 32, "eval_windows": 8}


@pytest.fixture(scope="module")
def run() -> trainer.Run:
    return trainer.advance(trainer.start(trainer.Plan("electra", steps=20, **TINY)))


@pytest.fixture(scope="module")
def window() -> tuple[str, ...]:
    tok = vocab.tokenizer()
    return ("[CLS]", *tok.tokenize("The list is sorted in place, then every item is printed to the screen."), "[SEP]")


def _batch(window: tuple[str, ...], n: int = 3) -> dict[str, torch.Tensor]:
    recipe, tok, voc = recipes.get("electra"), vocab.tokenizer(), vocab.objective_vocab()
    return batches.collate([electra.features(recipe, window, 0, i, 0, tok, voc) for i in range(n)])


def test_the_family_is_registered() -> None:
    assert lossfamilies.get("electra").loss is electra.loss


def test_generator_is_half_the_discriminator_with_its_embedding_width() -> None:
    gen, disc = electra.configs(recipes.get("electra"), "small")
    assert (gen.hidden_size, gen.num_attention_heads, gen.intermediate_size) == (128, 2, 512)
    assert gen.embedding_size == disc.hidden_size == disc.embedding_size == 256


def test_generator_and_discriminator_share_the_embedding_tensor(run: trainer.Run) -> None:
    pair = run.model
    table = pair.discriminator.electra.embeddings.word_embeddings.weight
    assert pair.generator.electra.embeddings.word_embeddings.weight is table
    assert pair.generator.generator_lm_head.weight.data_ptr() == table.data_ptr()


def test_training_lowers_the_loss(run: trainer.Run) -> None:
    losses = [v for _, v in run.losses]
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5
    assert run.evals[-1]["loss"] < run.evals[0]["loss"]
    assert 0.0 <= run.evals[-1]["accuracy"] <= 1.0
    assert run.flops > 0 and run.flops_per_token == pytest.approx(3 * electra.forward_flops(run.model, 32))


def test_the_same_seed_gives_the_same_losses() -> None:
    a = trainer.advance(trainer.start(trainer.Plan("electra", steps=3, seed=7, **TINY)))
    b = trainer.advance(trainer.start(trainer.Plan("electra", steps=3, seed=7, **TINY)))
    assert a.losses == b.losses


def test_the_masked_positions_are_the_strategys(window: tuple[str, ...]) -> None:
    recipe, tok, voc = recipes.get("electra"), vocab.tokenizer(), vocab.objective_vocab()
    ex = electra.features(recipe, window, 3, 5, 0, tok, voc)
    drawn = objectives.run("electra", window, examples.seed_for(3, 5), voc)
    assert [i for i, t in enumerate(ex["labels"]) if t != IGNORE] == [i for i, t in enumerate(drawn.targets) if t]
    assert ex["input_ids"] == tok.convert_tokens_to_ids(list(drawn.generator_input))
    assert all(ex["input_ids"][i] == 4 for i, t in enumerate(ex["labels"]) if t != IGNORE)  # [MASK]


def test_total_is_mlm_plus_50_rtd(run: trainer.Run, window: tuple[str, ...]) -> None:
    batch = _batch(window)
    out = electra.loss(run.model, batch)
    assert float(out.total.detach()) == pytest.approx(out.parts["mlm"] + 50 * out.parts["rtd"], rel=1e-5)
    assert out.parts["masked"] == int((batch["labels"] != IGNORE).sum())
    assert out.predicted == int(batch["attention_mask"].sum())  # the discriminator labels every real token


def test_a_sample_is_replaced_iff_it_differs_from_the_original() -> None:
    ids = torch.tensor([[2, 4, 9, 4, 3]])  # (1, T): [MASK] at 1 and 3
    labels = torch.tensor([[IGNORE, 20, IGNORE, 30, IGNORE]])
    fake, replaced = electra.corrupt(ids, labels, torch.tensor([20, 31]))  # right at 1, wrong at 3
    assert fake.tolist() == [[2, 20, 9, 31, 3]]
    assert replaced.tolist() == [[False, False, False, True, False]]


def test_correct_samples_count_as_original(run: trainer.Run, window: tuple[str, ...],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    batch = _batch(window)
    target = batch["labels"][batch["labels"] != IGNORE]
    monkeypatch.setattr(electra, "sample", lambda logits, seed: target)
    assert electra.loss(run.model, batch).parts["replaced"] == 0.0
    monkeypatch.setattr(electra, "sample", lambda logits, seed: (target + 1) % 8192)
    share = electra.loss(run.model, batch).parts["replaced"]
    assert share == pytest.approx(len(target) / int(batch["attention_mask"].sum()))


def test_sampling_is_seeded_and_has_no_gradient() -> None:
    logits = torch.randn(6, 50, requires_grad=True)
    a, b = electra.sample(logits, 1), electra.sample(logits, 1)
    assert torch.equal(a, b) and not a.requires_grad and a.shape == (6,)
    assert electra.sample(logits[:0], 1).shape == (0,)


def test_sampling_follows_the_generator_softmax() -> None:
    logits = torch.tensor([[0.0, math.log(3.0)]]).repeat(4000, 1)  # P(token 1) = 0.75
    share = float(electra.sample(logits, 0).float().mean())
    assert 0.72 < share < 0.78
