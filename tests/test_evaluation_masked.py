"""Masked LMs score by pseudo-log-likelihood (Salazar et al. 2020), encoder-decoders as their output: each equal
to a brute-force computation on the same tiny weights; a sentence encoder without an LM head is refused."""

from __future__ import annotations

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.evaluation import perplexity
from explorer.evaluation.masked import MaskedScorer
from explorer.evaluation.scorer import local_scorer, scorer_for
from explorer.evaluation.seq2seq import Seq2SeqScorer
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from tests.tiny_models import save_tiny


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny-eval")
    return {kind: save_tiny(kind, root / kind) for kind in ("bert", "roberta", "t5", "bart")}


def brute_pll(loaded, context: str, continuation: str) -> float:
    """Mask each continuation token in turn, one forward each, and sum log p(token)."""
    tok, model = loaded.tokenizer, loaded.model
    enc = tok(context + continuation, return_offsets_mapping=True, return_special_tokens_mask=True)
    total = 0.0
    for i, ((_, end), special) in enumerate(zip(enc["offset_mapping"], enc["special_tokens_mask"], strict=True)):
        if special or end <= len(context.rstrip()):
            continue
        ids = list(enc["input_ids"])
        ids[i] = tok.mask_token_id
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([ids])).logits[0, i]
        total += float(torch.log_softmax(logits, -1)[enc["input_ids"][i]])
    return total


@pytest.mark.parametrize("kind", ["bert", "roberta"])
def test_pseudo_log_likelihood_equals_masking_one_token_at_a_time(tiny_dir, kind: str) -> None:
    loaded = load_model(resolve(str(tiny_dir[kind])), "masked-lm", device="cpu")
    scorer = local_scorer(loaded)
    assert isinstance(scorer, MaskedScorer) and "Salazar" in scorer.method
    context, conts = "The capital of France is", (" Paris", " a large city by the river")
    got = scorer.example(context, conts)
    assert [s.logprob for s in got] == pytest.approx([brute_pll(loaded, context, c) for c in conts], abs=1e-4)
    assert got[1].tokens > got[0].tokens >= 1


@pytest.mark.parametrize("kind", ["t5", "bart"])
def test_encoder_decoder_scores_equal_the_model_with_labels(tiny_dir, kind: str) -> None:
    loaded = load_model(resolve(str(tiny_dir[kind])), "seq2seq", device="cpu")
    scorer = local_scorer(loaded)
    assert isinstance(scorer, Seq2SeqScorer)
    tok, model = loaded.tokenizer, loaded.model
    context, conts = "translate: the house", (" das Haus", " ein sehr kleines Haus am See")
    got = scorer.example(context, conts)
    for cont, score in zip(conts, got, strict=True):
        labels = torch.tensor([tok(cont, add_special_tokens=False)["input_ids"]])
        with torch.inference_mode():
            out = model(input_ids=torch.tensor([tok(context)["input_ids"]]), labels=labels)
        lp = torch.log_softmax(out.logits[0], -1).gather(1, labels[0][:, None]).sum()
        assert score.logprob == pytest.approx(float(lp), abs=1e-4) and score.tokens == labels.shape[1]


def test_masked_pseudo_perplexity_scores_every_token_once(tiny_dir) -> None:
    loaded = load_model(resolve(str(tiny_dir["bert"])), "masked-lm", device="cpu")
    res = perplexity.perplexity(local_scorer(loaded), "one two three four five six seven", window=5)
    assert res.method.startswith("pseudo-perplexity") and res.tokens == 7 and res.windows == res.total_windows == 3
    assert res.perplexity > 1


def test_an_encoder_decoder_has_no_perplexity_of_a_text(tiny_dir) -> None:
    loaded = load_model(resolve(str(tiny_dir["t5"])), "seq2seq", device="cpu")
    with pytest.raises(ExplorerError, match="encoder-decoder: a text's perplexity needs a decoder"):
        perplexity.perplexity(local_scorer(loaded), "Some text.")


def test_a_sentence_encoder_without_a_language_model_head_is_refused_in_words() -> None:
    with pytest.raises(ExplorerError, match="without a masked-language-model head"):
        scorer_for(resolve("sentence-bert"), device="cpu")
