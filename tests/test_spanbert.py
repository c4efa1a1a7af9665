"""explorer.training.spanbert: span masking from the objective, MLM + SBO, tiny runs."""

from __future__ import annotations

import pytest
import torch

from explorer import objectives
from explorer.training import batches, examples, lossfamilies, recipes, spanbert, trainer, vocab
from explorer.training.examples import IGNORE

TINY = {"batch_tokens": 256, "seq_len": 32, "eval_windows": 8}


@pytest.fixture(scope="module")
def run() -> trainer.Run:
    return trainer.advance(trainer.start(trainer.Plan("spanbert", steps=20, **TINY)))


@pytest.fixture(scope="module")
def window() -> tuple[str, ...]:
    tok = vocab.tokenizer()
    text = "The interpreter reads each line of the file, compiles it to bytecode and then runs the resulting code."
    return ("[CLS]", *tok.tokenize(text), "[SEP]")


def _features(window: tuple[str, ...], index: int) -> dict:
    return spanbert.features(recipes.get("spanbert"), window, 1, index, 0, vocab.tokenizer(), vocab.objective_vocab())


def test_the_family_is_registered() -> None:
    assert lossfamilies.get("spanbert").loss is spanbert.loss


def test_training_lowers_the_loss(run: trainer.Run) -> None:
    losses = [v for _, v in run.losses]
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5
    assert run.evals[-1]["loss"] < run.evals[0]["loss"]


def test_the_same_seed_gives_the_same_losses() -> None:
    a = trainer.advance(trainer.start(trainer.Plan("spanbert", steps=3, seed=5, **TINY)))
    b = trainer.advance(trainer.start(trainer.Plan("spanbert", steps=3, seed=5, **TINY)))
    assert a.losses == b.losses


def test_the_masked_positions_are_the_strategys(window: tuple[str, ...]) -> None:
    tok = vocab.tokenizer()
    for index in range(5):
        ex = _features(window, index)
        drawn = objectives.run("spanbert", window, examples.seed_for(1, index), vocab.objective_vocab())
        assert ex["input_ids"] == tok.convert_tokens_to_ids(list(drawn.input_tokens))
        assert [i for i, t in enumerate(ex["labels"]) if t != IGNORE] == [i for i, t in enumerate(drawn.targets) if t]
        assert [i for i, p in enumerate(ex["sbo_position"]) if p] == [i for s, e in drawn.spans for i in range(s, e)]


def test_sbo_targets_are_the_span_tokens_and_boundaries_lie_outside(window: tuple[str, ...]) -> None:
    tok = vocab.tokenizer()
    for index in range(5):
        ex = _features(window, index)
        drawn = objectives.run("spanbert", window, examples.seed_for(1, index), vocab.objective_vocab())
        for start, end in drawn.spans:
            for i in range(start, end):
                assert ex["labels"][i] == tok.convert_tokens_to_ids(window[i])  # the original token
                assert ex["sbo_left"][i] == start - 1 and ex["sbo_right"][i] == end  # just outside the span
                assert ex["sbo_position"][i] == i - start + 1
                assert not start <= ex["sbo_left"][i] < end and not start <= ex["sbo_right"][i] < end


def test_sbo_logits_predict_the_span_tokens(run: trainer.Run, window: tuple[str, ...]) -> None:
    batch = batches.collate([_features(window, i) for i in range(3)])
    hidden = torch.randn(3, batch["input_ids"].shape[1], 128)  # (B, T, H)
    logits, target = spanbert.sbo_logits(run.model, hidden, batch)
    assert torch.equal(target, batch["labels"][batch["labels"] != IGNORE])
    assert logits.shape == (target.numel(), 8192)


def test_total_is_mlm_plus_sbo(run: trainer.Run, window: tuple[str, ...]) -> None:
    batch = batches.collate([_features(window, i) for i in range(3)])
    out = spanbert.loss(run.model, batch)
    assert float(out.total.detach()) == pytest.approx(out.parts["mlm"] + out.parts["sbo"], rel=1e-5)
    assert out.predicted == out.parts["span_tokens"] == int((batch["labels"] != IGNORE).sum())


def test_sbo_reuses_the_mlm_decoder(run: trainer.Run) -> None:
    decoder = run.model.mlm.cls.predictions.decoder
    assert decoder.weight is run.model.mlm.bert.embeddings.word_embeddings.weight
