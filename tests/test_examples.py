"""Examples: what a model trains on is exactly what explorer.objectives draws."""

from __future__ import annotations

from explorer import objectives
from explorer.training import batches, corpus, examples, recipes, vocab


def _window() -> tuple[str, ...]:
    return batches.windows(corpus.bundled(), "heldout", 64)[3]


def test_mlm_features_are_the_strategy_result_as_ids() -> None:
    tok, v, w = vocab.tokenizer(), vocab.objective_vocab(), _window()
    ex = examples.features(recipes.get("mlm"), w, seed=7, index=3, epoch=0, tok=tok, vocab=v)
    ref = objectives.run("bert", w, examples.seed_for(7, 3), v)
    assert ex["input_ids"] == tok.convert_tokens_to_ids(list(ref.input_tokens))
    labelled = [i for i, t in enumerate(ref.targets) if t is not None]
    assert [i for i, lab in enumerate(ex["labels"]) if lab != examples.IGNORE] == labelled
    assert len(labelled) == ref.n_predicted > 0


def test_static_masking_repeats_every_epoch_and_dynamic_masking_does_not() -> None:
    tok, v, w = vocab.tokenizer(), vocab.objective_vocab(), _window()
    static = [examples.features(recipes.get("mlm"), w, 1, 0, e, tok, v)["labels"] for e in range(3)]
    dynamic = [examples.features(recipes.get("roberta"), w, 1, 0, e, tok, v)["labels"] for e in range(3)]
    assert static[0] == static[1] == static[2]
    assert len({tuple(d) for d in dynamic}) == 3


def test_sentence_objectives_add_a_label_and_two_segments() -> None:
    tok, w = vocab.tokenizer(), _window()
    v = vocab.objective_vocab((w[1:10],))
    for name in ("bert", "albert"):
        ex = examples.features(recipes.get(name), w, 0, 5, 0, tok, v)
        assert ex["sentence_label"] in (0, 1)
        assert set(ex["token_type_ids"]) == {0, 1} and len(ex["token_type_ids"]) == len(ex["input_ids"])


def test_ids_maps_missing_targets_to_ignore() -> None:
    assert examples.ids(vocab.tokenizer(), ["[CLS]", None, "[MASK]"]) == [2, examples.IGNORE, 4]
