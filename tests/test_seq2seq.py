"""The seq2seq family: T5 and BART features are the strategies' own, the loss is transformers', tiny runs learn,
a seed repeats, and a saved checkpoint fills spans on the Spans page's path."""

from __future__ import annotations

import pytest
import torch

from explorer import objectives
from explorer.architecture import cost
from explorer.runtime.resolve import resolve
from explorer.tasks import infill
from explorer.training import batches, corpus, examples, lossfamilies, models, recipes, seq2seq, trainer, vocab

TINY = {"steps": 20, "batch_tokens": 256, "seq_len": 32, "eval_windows": 4, "eval_every": 20}


@pytest.fixture(scope="module")
def windows() -> tuple[batches.Window, ...]:
    return batches.windows(corpus.bundled(), "train", 32)[:12]


@pytest.fixture(scope="module", params=["t5", "bart"])
def trained(request) -> trainer.Run:
    return trainer.advance(trainer.start(trainer.Plan(request.param, **TINY)))


def _features(name: str, window, index: int = 3) -> dict:
    return seq2seq.features(recipes.get(name), window, 7, index, 0, vocab.tokenizer(), vocab.objective_vocab())


def test_t5_target_is_exactly_the_strategys_on_the_window_as_t5_frames_it(windows) -> None:
    tok = vocab.tokenizer()
    for index, window in enumerate(windows[:4]):
        got = _features("t5", window, index)
        want = objectives.run("t5", window[1:], examples.seed_for(7, index), vocab.objective_vocab())
        assert got["labels"] == tok.convert_tokens_to_ids(list(want.target_tokens))
        assert got["input_ids"] == tok.convert_tokens_to_ids(["[CLS]", *want.input_tokens])
        target = want.target_tokens
        assert target[0] == "<extra_id_0>" and target[-1] == "[SEP]" and "[CLS]" not in target  # T5's "... </s>"


def test_bart_target_is_the_whole_window_and_each_span_one_mask(windows) -> None:
    tok = vocab.tokenizer()
    window = windows[0]
    got = _features("bart", window)
    want = objectives.run("bart-infill", window, examples.seed_for(7, 3), vocab.objective_vocab())
    assert got["labels"] == tok.convert_tokens_to_ids(list(window))
    assert got["input_ids"] == tok.convert_tokens_to_ids(list(want.input_tokens))
    assert got["input_ids"].count(tok.mask_token_id) == len(want.spans) > 0


@pytest.mark.parametrize("name", ["t5", "bart"])
def test_configs_use_the_lab_specials(name) -> None:
    model = seq2seq.build(recipes.get(name), "tiny", seed=0)
    cfg = model.config
    assert (cfg.pad_token_id, cfg.decoder_start_token_id, cfg.eos_token_id) == (0, 2, 3)
    assert model.generation_config.decoder_start_token_id == 2 and model.generation_config.eos_token_id == 3
    assert getattr(model.generation_config, "forced_eos_token_id", None) in (None, 3)  # BART's would be [CLS]


@pytest.mark.parametrize("name", ["t5", "bart"])
def test_loss_equals_transformers_own(name, windows) -> None:
    model = seq2seq.build(recipes.get(name), "tiny", seed=1).eval()
    batch = batches.collate([_features(name, w, i) for i, w in enumerate(windows[:5])])
    with torch.no_grad():
        ours = seq2seq.loss(model, batch)
        theirs = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"])
    assert torch.allclose(ours.total, theirs.loss, atol=1e-5)
    assert ours.predicted == int((batch["labels"] != examples.IGNORE).sum()) and 0 <= ours.correct <= ours.predicted


def test_flops_split_is_the_cost_models_total_and_the_ratio_follows_the_target() -> None:
    for name, lo, hi in (("t5", 0.15, 0.35), ("bart", 1.05, 1.4)):
        model = seq2seq.build(recipes.get(name), "tiny", seed=0)
        encoder, decoder = seq2seq.flops_split(model, 128)
        assert encoder + decoder == cost.per_token(model, model.config, 128).total
        assert 0 < encoder < decoder  # the decoder carries cross-attention and the vocabulary projection
        ratio = seq2seq.target_ratio(name, 128)
        assert lo < ratio < hi
        assert seq2seq.forward_flops(model, 128) == pytest.approx(encoder + ratio * decoder)
    assert lossfamilies.get("seq2seq").forward_flops is seq2seq.forward_flops


def test_loss_decreases(trained) -> None:
    losses = [v for _, v in trained.losses]
    assert len(losses) == TINY["steps"]
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3 - 0.5
    assert trained.evals[-1]["loss"] < trained.evals[0]["loss"]
    assert 0.0 <= trained.evals[-1]["accuracy"] <= 1.0


def test_same_seed_same_losses() -> None:
    plan = trainer.Plan("t5", **{**TINY, "steps": 3})
    first, second = (trainer.advance(trainer.start(plan)) for _ in range(2))
    assert first.losses == second.losses


def test_saved_checkpoint_fills_spans_on_the_live_path(trained, tmp_path) -> None:
    trained.model.save_pretrained(tmp_path)
    vocab.tokenizer().save_pretrained(tmp_path)
    result = infill.run(resolve(str(tmp_path)), "the list is ___ by the function.", max_new_tokens=4)
    assert result.family == trained.recipe.name
    if result.family == "t5":
        assert result.model_input == "the list is <extra_id_0> by the function."
        assert result.raw_output.startswith("[CLS] <extra_id_0>") and result.aligned  # decoder start, then the sentinel
        assert all("[SEP]" not in s and "[PAD]" not in s for s in result.spans)
    else:
        assert result.model_input == "the list is [MASK] by the function."
        assert result.raw_output.startswith("[CLS]")


def test_models_build_is_seeded() -> None:
    a, b = (seq2seq.build(recipes.get("t5"), "tiny", seed=3) for _ in range(2))
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert models.parameters(a) == a.num_parameters()
