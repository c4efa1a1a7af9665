"""explorer.explain.framer / frame / scorer: each task's rows, shown tokens and terms, and the scorer equal to the
model's own log-probabilities (and cosine) read from ``model(input_ids)`` (an oracle on the same weights)."""

from __future__ import annotations

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.explain import framer, scorer
from explorer.runtime import loading
from explorer.runtime.resolve import resolve
from explorer.tasks.similarity import encode
from tests.tiny_gemma import load_tiny_gemma
from tests.tiny_models import save_tiny


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("explain-frame")
    out = {k: loading.load_model(resolve(str(save_tiny(k, root / k))), t, device="cpu")
           for k, t in (("bert", "masked-lm"), ("t5", "seq2seq"), ("bart", "seq2seq"), ("bert-base", "base"))}
    out["gemma"] = load_tiny_gemma(root / "gemma", device="cpu")
    return out


def _logp(logits: torch.Tensor, at: int, token: int) -> float:
    return float(logits[at].float().log_softmax(-1)[token])


def test_a_decoder_reads_text_and_target_and_the_scorer_is_its_log_probability(tiny) -> None:
    loaded = tiny["gemma"]
    f = framer.build(loaded, "next-token", "The capital of France is", "Paris")
    assert f.kind == "causal" and [s.text for s in f.shown] == ["The", " capital", " of", " France", " is"]
    with torch.no_grad():
        logits = loaded.model(input_ids=torch.tensor([f.rows[0]])).logits[0]  # (T, V)
    want = sum(_logp(logits, t.at - 1, t.token) for t in f.terms)
    assert float(scorer.values(loaded.model, [f])[0]) == pytest.approx(want, abs=1e-5)


def test_a_foil_gets_its_own_row_and_the_text_is_tied_across_rows(tiny) -> None:
    f = framer.build(tiny["gemma"], "next-token", "The capital of France is", "Paris", "Rome")
    assert len(f.rows) == 2 and all(len(s.places) == 2 for s in f.shown)
    one = framer.build(tiny["gemma"], "next-token", "The capital of France is", "Paris")
    other = framer.build(tiny["gemma"], "next-token", "The capital of France is", "Rome")
    v = scorer.values(tiny["gemma"].model, [f, one, other])
    assert float(v[0]) == pytest.approx(float(v[1] - v[2]), abs=1e-5)


def test_a_fill_in_scores_the_words_after_the_blank_too(tiny) -> None:
    f = framer.build(tiny["gemma"], "fill-in", "The capital ___ is big.", "city")
    assert [s.text for s in f.shown][-3:] == [" is", " big", "."]
    assert len(f.terms) == len(f.target.ids) + 3  # the target's tokens, then " is big."


def test_a_masked_lm_gets_one_mask_per_target_token(tiny) -> None:
    loaded = tiny["bert"]
    f = framer.build(loaded, "masked", "The capital of France is [MASK].", "paris")
    assert f.kind == "masked" and [loaded.tokenizer.convert_ids_to_tokens(f.rows[0][t.at]) for t in f.terms] == [
        "[MASK]"] * len(f.target.ids)
    with torch.no_grad():
        logits = loaded.model(input_ids=torch.tensor([f.rows[0]])).logits[0]
    want = sum(_logp(logits, t.at, t.token) for t in f.terms)
    assert float(scorer.values(loaded.model, [f])[0]) == pytest.approx(want, abs=1e-5)
    two = framer.build(loaded, "masked", "The capital of France is [MASK].", "tegucigalpa")
    assert len(two.terms) == len(two.target.ids) > 1


@pytest.mark.parametrize("kind", ["t5", "bart"])
def test_an_encoder_decoder_writes_the_span_and_the_scorer_reads_its_decoder(tiny, kind) -> None:
    loaded = tiny[kind]
    f = framer.build(loaded, "span", "The capital of France is ___.", "Paris", "Rome")
    assert f.kind == "seq2seq" and f.rows[0] == f.rows[1] and len(f.decoder) == 2
    values = []
    for r in range(2):
        with torch.no_grad():
            logits = loaded.model(input_ids=torch.tensor([f.rows[r]]),
                                  decoder_input_ids=torch.tensor([f.decoder[r]])).logits[0]
        values.append(sum(_logp(logits, t.at - 1, t.token) for t in f.terms if t.row == r))
    assert float(scorer.values(loaded.model, [f])[0]) == pytest.approx(values[0] - values[1], abs=1e-5)


def test_a_sentence_pair_scores_the_cosine_of_the_two_embeddings(tiny) -> None:
    loaded = tiny["bert-base"]
    f = framer.build(loaded, "similarity", "A man is eating food.", None, pair="A man eats bread.")
    assert f.kind == "pair" and {s.part for s in f.shown} == {0, 1}
    emb = encode(loaded, ["A man is eating food.", "A man eats bread."])
    assert float(scorer.values(loaded.model, [f])[0]) == pytest.approx(float(emb[0] @ emb[1]), abs=1e-5)


def test_without_a_target_the_models_own_prediction_is_explained(tiny) -> None:
    f = framer.build(tiny["gemma"], "next-token", "The capital of France is")
    assert f.target is not None and f.target.own
    with torch.no_grad():
        top = int(tiny["gemma"].model(input_ids=torch.tensor([f.rows[0][:-1]])).logits[0, -1].argmax())
    assert f.target.ids == (top,)


def test_leaving_a_token_out_is_the_text_without_it(tiny) -> None:
    loaded = tiny["bert"]
    f = framer.build(loaded, "masked", "The capital of France is [MASK].", "paris")
    g = f.without(1)  # " capital"
    shorter = framer.build(loaded, "masked", "The of France is [MASK].", "paris")
    assert g.rows == shorter.rows and g.terms == shorter.terms


@pytest.mark.parametrize(("task", "text", "said"), [
    ("masked", "No blank here.", "No blank"), ("masked", "Two [MASK] blanks [MASK].", "one blank is explained"),
    ("next-token", "x" * 5000, "characters"),
])
def test_bad_questions_are_one_sentence(tiny, task, text, said) -> None:
    with pytest.raises(ExplorerError, match=said):
        framer.build(tiny["bert"], task, text, "paris")


def test_the_foil_cannot_be_the_target(tiny) -> None:
    with pytest.raises(ExplorerError, match="foil is the target"):
        framer.build(tiny["gemma"], "next-token", "The capital is", "Paris", " Paris")
