"""explorer.training.distilbert: a half-depth DistilBERT student, a frozen teacher, the triple loss."""

from __future__ import annotations

import pytest
import torch

from explorer import objectives
from explorer.core.errors import ExplorerError
from explorer.objectives import distill as formula
from explorer.training import batches, distilbert, examples, lossfamilies, recipes, trainer, vocab
from explorer.training.examples import IGNORE

TINY = {"batch_tokens": 256, "seq_len": 32, "eval_windows": 8}


@pytest.fixture(scope="module")
def teacher() -> trainer.Run:
    return trainer.advance(trainer.start(trainer.Plan("mlm", steps=20, **TINY)))


@pytest.fixture(scope="module")
def run(teacher: trainer.Run) -> trainer.Run:
    return trainer.advance(trainer.start(trainer.Plan("distilbert", steps=20, **TINY), teacher=teacher))


def _batch(n: int = 3) -> dict[str, torch.Tensor]:
    tok, voc = vocab.tokenizer(), vocab.objective_vocab()
    window = ("[CLS]", *tok.tokenize("Every module has a name, and the name is a string used to import it."), "[SEP]")
    return batches.collate([examples.features(recipes.get("distilbert"), window, 0, i, 0, tok, voc) for i in range(n)])


def test_the_family_is_registered_with_a_teacher() -> None:
    assert lossfamilies.get("distill").loss is distilbert.loss and lossfamilies.get("distill").teacher == "mlm"


def test_the_student_has_half_the_layers_and_the_same_width(run: trainer.Run, teacher: trainer.Run) -> None:
    s, t = run.model.config, teacher.model.config
    assert type(run.model).__name__ == "DistilBertForMaskedLM"
    assert s.n_layers == t.num_hidden_layers // 2 and s.dim == t.hidden_size and s.hidden_dim == t.intermediate_size


def test_the_teacher_is_frozen_off_the_student_tree(run: trainer.Run) -> None:
    held = distilbert.teacher_of(run.model)
    assert not held.training and not any(p.requires_grad for p in held.parameters())
    own = {id(p) for p in run.model.parameters()}
    assert not any(id(p) in own for p in held.parameters())
    assert not any(k.startswith("lab_teacher") for k in run.model.state_dict())


def test_a_step_leaves_the_teacher_and_its_run_unchanged(run: trainer.Run, teacher: trainer.Run) -> None:
    held = distilbert.teacher_of(run.model)
    before = {k: v.clone() for k, v in held.state_dict().items()}
    out = distilbert.loss(run.model, _batch())
    run.optimizer.zero_grad()
    out.total.backward()
    run.optimizer.step()
    run.optimizer.zero_grad()
    assert all(torch.equal(before[k], v) for k, v in held.state_dict().items())
    assert held is not teacher.model and teacher.model.bert.embeddings.word_embeddings.weight.requires_grad


def test_training_lowers_the_held_out_loss(run: trainer.Run) -> None:
    assert run.evals[-1]["loss"] < run.evals[0]["loss"]


def test_the_same_seed_and_teacher_give_the_same_losses(teacher: trainer.Run) -> None:
    plan = trainer.Plan("distilbert", steps=3, seed=4, **TINY)
    a = trainer.advance(trainer.start(plan, teacher=teacher))
    b = trainer.advance(trainer.start(plan, teacher=teacher))
    assert a.losses == b.losses


def test_total_is_the_weighted_triple_loss(run: trainer.Run) -> None:
    batch = _batch()
    out = distilbert.loss(run.model, batch)
    expected = 5.0 * out.parts["ce"] + 2.0 * out.parts["mlm"] + 1.0 * out.parts["cos"]
    assert float(out.total.detach()) == pytest.approx(expected, rel=1e-5)
    assert (distilbert.ALPHA_CE, distilbert.ALPHA_MLM, distilbert.ALPHA_COS,
            distilbert.TEMPERATURE) == (5.0, 2.0, 1.0, 2.0)
    assert out.predicted == int((batch["labels"] != IGNORE).sum())


def test_the_masked_positions_are_the_bert_strategys() -> None:
    tok, voc = vocab.tokenizer(), vocab.objective_vocab()
    window = ("[CLS]", *tok.tokenize("A tuple is an immutable sequence of values of any type."), "[SEP]")
    ex = examples.features(recipes.get("distilbert"), window, 2, 9, 0, tok, voc)
    drawn = objectives.run("bert", window, examples.seed_for(2, 9), voc)
    assert [i for i, t in enumerate(ex["labels"]) if t != IGNORE] == [i for i, t in enumerate(drawn.targets) if t]


def test_the_soft_term_is_the_objectives_formula() -> None:
    teacher, student = formula.EXAMPLE_TEACHER, formula.EXAMPLE_STUDENT
    ref = formula.distill_loss(formula.EXAMPLE_TOKENS, teacher, student, formula.EXAMPLE_TRUE, temperature=2.0)
    ours = distilbert.soft_kl(torch.tensor([student]), torch.tensor([teacher]), 2.0)
    assert float(ours) == pytest.approx(ref.kl_scaled, rel=1e-5)


def test_a_full_depth_copy_reproduces_the_teacher(teacher: trainer.Run) -> None:
    from transformers import DistilBertForMaskedLM

    held = distilbert.load_teacher(teacher.model)
    cfg = distilbert.student_config(recipes.get("distilbert"), "tiny", held)
    cfg.n_layers = held.config.num_hidden_layers
    student = DistilBertForMaskedLM(cfg).eval()
    distilbert.init_from_teacher(student, held, stride=1)
    batch = _batch(2)
    real = batch["attention_mask"].bool()
    with torch.no_grad():
        a = student(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[real]
        b = held(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[real]
    assert torch.allclose(a, b, atol=1e-4)


def test_a_saved_teacher_directory_is_a_teacher(teacher: trainer.Run, tmp_path) -> None:
    teacher.model.save_pretrained(tmp_path)
    run = trainer.start(trainer.Plan("distilbert", steps=2, teacher=str(tmp_path), **TINY))
    loaded = distilbert.teacher_of(run.model)
    assert torch.equal(loaded.bert.embeddings.word_embeddings.weight,
                       teacher.model.bert.embeddings.word_embeddings.weight)


def test_a_bad_teacher_says_what_to_give(tmp_path) -> None:
    with pytest.raises(ExplorerError, match="config.json"):
        trainer.start(trainer.Plan("distilbert", steps=2, teacher=str(tmp_path), **TINY))
    with pytest.raises(ExplorerError, match="BERT masked LM"):
        distilbert.load_teacher(torch.nn.Linear(2, 2))
    with pytest.raises(ExplorerError, match="teacher"):
        distilbert.build(recipes.get("distilbert"), "tiny", 0)


def test_without_a_teacher_one_is_trained_first() -> None:
    run = trainer.start(trainer.Plan("distilbert", steps=2, **TINY))
    held = distilbert.teacher_of(run.model)
    assert type(held).__name__ == "BertForMaskedLM" and run.model.config.n_layers == 1
    assert run.flops_per_token == pytest.approx(3 * distilbert.forward_flops(run.model, 32))
