"""Losses: the gathered masked-LM loss equals transformers' own loss on the same batch."""

from __future__ import annotations

import pytest
import torch

from explorer.training import batches, corpus, examples, losses, models, recipes, vocab


def _batch(name: str) -> dict[str, torch.Tensor]:
    ws = batches.windows(corpus.bundled(), "heldout", 48)
    v = vocab.objective_vocab(tuple(w[1:12] for w in ws[:30]))
    return batches.collate([examples.features(recipes.get(name), ws[i], 0, i, 0, vocab.tokenizer(), v)
                            for i in range(6)])


@pytest.mark.parametrize(("name", "sentence_kw"), [("mlm", None), ("roberta", None), ("bert", "next_sentence_label"),
                                                   ("albert", "sentence_order_label")])
def test_the_loss_equals_transformers_loss(name: str, sentence_kw: str | None) -> None:
    model = models.build(recipes.get(name), "tiny", 0).eval()
    b = _batch(name)
    with torch.no_grad():
        ours = losses.mlm(model, b)
    kw = {k: b[k] for k in ("input_ids", "attention_mask")}
    if sentence_kw:
        kw.update(token_type_ids=b["token_type_ids"], **{sentence_kw: b["sentence_label"]})
    with torch.no_grad():
        ref = model(**kw, labels=b["labels"]).loss
    assert float(ours.total) == pytest.approx(float(ref), rel=1e-5)
    assert ours.predicted == int((b["labels"] != examples.IGNORE).sum())
    assert 0 <= ours.correct <= ours.predicted
    assert ("sentence" in ours.parts) == bool(sentence_kw)


def test_a_batch_with_nothing_masked_gives_zero_loss_with_a_gradient() -> None:
    model = models.build(recipes.get("mlm"), "tiny", 0)
    b = _batch("mlm")
    b["labels"][:] = examples.IGNORE
    out = losses.mlm(model, b)
    out.total.backward()
    assert float(out.total) == 0.0 and out.predicted == 0
