"""The causal family: next-token targets are the strategy's own, the loss is GPT-2's, tiny runs learn, a seed
repeats, and a saved checkpoint answers on the Decoding lab's and the Spans page's decoder paths."""

from __future__ import annotations

import pytest
import torch

from explorer import objectives
from explorer.runtime.resolve import resolve
from explorer.tasks import infill
from explorer.tasks.generation import run as generation
from explorer.tasks.generation.strategy import DecodingSettings
from explorer.training import batches, causal, corpus, examples, recipes, trainer, vocab

TINY = {"steps": 20, "batch_tokens": 256, "seq_len": 32, "eval_windows": 4, "eval_every": 20}


@pytest.fixture(scope="module")
def windows() -> tuple[batches.Window, ...]:
    return batches.windows(corpus.bundled(), "train", 32)[:8]


@pytest.fixture(scope="module")
def trained() -> trainer.Run:
    return trainer.advance(trainer.start(trainer.Plan("gpt", **TINY)))


def _features(window, index: int = 0) -> dict:
    return causal.features(recipes.get("gpt"), window, 0, index, 0, vocab.tokenizer(), vocab.objective_vocab())


def test_targets_are_the_strategys_next_tokens(windows) -> None:
    tok = vocab.tokenizer()
    window = windows[0]
    got = _features(window)
    want = objectives.run("gpt-clm", causal.frame(window), examples.seed_for(0, 0), vocab.objective_vocab())
    assert causal.frame(window) == list(window[:-1])  # [CLS] x: the cut window's [SEP] is no end to predict
    assert got["input_ids"] == tok.convert_tokens_to_ids(list(window[:-1]))
    assert got["labels"] == got["input_ids"][1:] + [examples.IGNORE]
    assert got["labels"] == examples.ids(tok, want.targets)


def test_loss_equals_gpt2s_own(windows) -> None:
    model = recipes_model().eval()
    batch = batches.collate([_features(w, i) for i, w in enumerate(windows[:5])])
    labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, examples.IGNORE)  # (B, T)
    with torch.no_grad():
        ours = causal.loss(model, batch)
        theirs = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=labels)
    assert torch.allclose(ours.total, theirs.loss, atol=1e-5)
    assert ours.predicted == int(batch["attention_mask"].sum()) - len(batch["input_ids"])  # every position but the last


def recipes_model() -> torch.nn.Module:
    from explorer.training import lossfamilies

    return lossfamilies.get("causal").build(recipes.get("gpt"), "tiny", 1)


def test_loss_decreases(trained) -> None:
    losses = [v for _, v in trained.losses]
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3 - 0.5
    assert trained.evals[-1]["loss"] < trained.evals[0]["loss"]


def test_same_seed_same_losses() -> None:
    plan = trainer.Plan("gpt", **{**TINY, "steps": 3})
    first, second = (trainer.advance(trainer.start(plan)) for _ in range(2))
    assert first.losses == second.losses


def test_saved_checkpoint_decodes_on_the_live_paths(trained, tmp_path) -> None:
    trained.model.save_pretrained(tmp_path)
    vocab.tokenizer().save_pretrained(tmp_path)
    loaded = generation.load_decoder(resolve(str(tmp_path)))
    prompt, _ = generation.start(loaded, "the list is", DecodingSettings(max_new_tokens=4))
    assert prompt.ids[0] == 2 and prompt.ids[-1] != 3  # [CLS] the list is: no [SEP] for the decoder to continue after
    out = generation.generate(loaded, "the list is", DecodingSettings(max_new_tokens=4))
    assert 1 <= len(out.steps) <= 4 and not out.notices
    filled = infill.run(resolve(str(tmp_path)), "the list is ___ by the function.", max_new_tokens=2)
    assert filled.family == "causal" and len(filled.spans) == 1 and filled.aligned
