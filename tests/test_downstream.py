"""The downstream probe: balanced seeded examples, one adjacent swap, disjoint splits, a copy fine-tuned, encoders
found.

Invariants only: a tiny budget decides nothing about what pre-training teaches, so no test asserts
that a trained model beats the floor.
"""

from __future__ import annotations

import random

import pytest
import torch
from torch import nn

from explorer.core.errors import ExplorerError
from explorer.training import batches, corpus, downstream, trainer, vocab
from explorer.training.downstream import ProbeSpec

TINY = ProbeSpec(steps=3, batch=4, lr=5e-4, seq_len=32, test_examples=16, seed=0)
NOUNS = ["list", "value", "module", "function", "string", "file", "class", "method", "object", "number", "error",
         "thread", "socket", "buffer"]
VERBS = ["returns", "reads", "writes", "sorts", "copies", "opens", "closes", "raises", "holds", "prints", "calls",
         "checks"]
ADJS = ["new", "empty", "first", "last", "small", "large", "open", "closed", "given", "default"]


@pytest.fixture(scope="module")
def text() -> corpus.Corpus:
    """40 documents of simple English (every 20th is held out: two held-out documents)."""
    rng = random.Random(0)
    docs = []
    for d in range(40):
        sentences = [f"the {rng.choice(ADJS)} {rng.choice(NOUNS)} {rng.choice(VERBS)} a {rng.choice(NOUNS)} "
                     f"when the {rng.choice(NOUNS)} is {rng.choice(ADJS)} ." for _ in range(24)]
        docs.append(f"### doc{d}\n" + "\n".join(sentences))
    return corpus.from_text("\n".join(docs), "probe test")


def _bert(layers: int = 1):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    return BertForMaskedLM(BertConfig(vocab_size=len(vocab.tokenizer()), hidden_size=32, num_hidden_layers=layers,
                                      num_attention_heads=2, intermediate_size=64, max_position_embeddings=64))


def test_examples_are_balanced_and_seeded(text):
    train = downstream.examples(text, "train", 40, seed=3, seq_len=32)
    assert len(train) == 40 and sum(e.label for e in train) == 20
    assert [e.tokens for e in train] == [e.tokens for e in downstream.examples(text, "train", 40, seed=3, seq_len=32)]
    assert [e.tokens for e in train] != [e.tokens for e in downstream.examples(text, "train", 40, seed=4, seq_len=32)]
    assert len({e.source for e in train}) == 40  # every example from its own window


def test_a_positive_is_one_adjacent_transposition_and_a_negative_is_untouched(text):
    for e in downstream.examples(text, "train", 60, seed=1, seq_len=32):
        diff = [i for i, (a, b) in enumerate(zip(e.tokens, e.source, strict=True)) if a != b]
        if e.label == 0:
            assert diff == [] and e.tokens == e.source
            continue
        assert len(diff) == 2 and diff[1] == diff[0] + 1
        i = diff[0]
        assert (e.tokens[i], e.tokens[i + 1]) == (e.source[i + 1], e.source[i])
        assert e.tokens[0] == "[CLS]" and e.tokens[-1] == "[SEP]"
        assert all(t.isalpha() for t in e.tokens[i:i + 2])


def test_swap_positions_skip_frames_word_pieces_and_equal_words():
    window = ("[CLS]", "a", "list", "##s", "is", "is", "here", "[SEP]")
    assert downstream.swap_positions(window) == [5]  # list+##s is one word; "is is" would not change; [SEP] never moves
    assert downstream.swap(window, 5)[5:7] == ("here", "is")


def test_train_and_test_come_from_disjoint_documents(text):
    train_windows = set(batches.windows(text, "train", 32))
    heldout_windows = set(batches.windows(text, "heldout", 32))
    train = downstream.examples(text, "train", 40, seed=0, seq_len=32)
    test = downstream.examples(text, "heldout", 16, seed=0, seq_len=32)
    assert all(e.source in train_windows and e.split == "train" for e in train)
    assert all(e.source in heldout_windows and e.split == "heldout" for e in test)
    assert not {e.source for e in train} & {e.source for e in test}
    assert all(" ".join(doc) not in " ".join(map(" ".join, text.train)) for doc in text.heldout)


def test_probe_leaves_the_run_model_unchanged_and_is_repeatable(text):
    plan = trainer.Plan("mlm", steps=3, batch_tokens=256, seq_len=32, eval_windows=4)
    run = trainer.advance(trainer.start(plan, text))
    before = {k: v.clone() for k, v in run.model.state_dict().items()}
    mode = run.model.training
    first = downstream.probe(run.model, text, TINY)
    assert all(torch.equal(before[k], v) for k, v in run.model.state_dict().items())
    assert run.model.training == mode
    second = downstream.probe(run.model, text, TINY)
    assert first.accuracy == second.accuracy
    assert 0.0 <= first.accuracy <= 1.0 and first.majority == 0.5
    assert (first.n_train, first.n_test) == (TINY.steps * TINY.batch, TINY.test_examples)
    assert set(first.to_dict()) >= {"task", "accuracy", "stderr", "majority", "spec"}


def test_floor_is_a_random_model_of_the_same_architecture(text):
    result = downstream.floor("mlm", "tiny", text, TINY, seed=0)
    assert 0.0 <= result.accuracy <= 1.0 and result.n_test == TINY.test_examples


def test_encoder_of_the_masked_lm_family():
    from transformers import AlbertConfig, AlbertForPreTraining, DistilBertConfig, DistilBertForMaskedLM

    bert = _bert()
    assert downstream.encoder_of(bert).module is bert.bert and downstream.encoder_of(bert).pool == "mean"
    albert = AlbertForPreTraining(AlbertConfig(vocab_size=64, embedding_size=16, hidden_size=32, num_hidden_layers=1,
                                               num_attention_heads=2, intermediate_size=64))
    assert downstream.encoder_of(albert).module is albert.albert
    distil = DistilBertForMaskedLM(DistilBertConfig(vocab_size=64, dim=32, n_layers=1, n_heads=2, hidden_dim=64))
    found = downstream.encoder_of(distil)
    assert found.module is distil.distilbert and found.hidden_size == 32


def test_encoder_of_the_other_families_by_attribute_names():
    from transformers import ElectraConfig, GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration

    from explorer.architecture.custom_models import ElectraPair, SpanBert

    disc = ElectraConfig(vocab_size=64, embedding_size=32, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64)
    gen = ElectraConfig(vocab_size=64, embedding_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=1,
                        intermediate_size=32)
    pair = ElectraPair(gen, disc)
    assert downstream.encoder_of(pair).module is pair.discriminator.electra
    span = SpanBert(_bert().config)
    assert downstream.encoder_of(span).module is span.mlm.bert
    t5 = T5ForConditionalGeneration(T5Config(vocab_size=64, d_model=32, d_kv=16, d_ff=64, num_layers=1, num_heads=2))
    found = downstream.encoder_of(t5)
    assert found.module is t5.get_encoder() and found.hidden_size == 32 and found.pool == "mean"
    gpt = GPT2LMHeadModel(GPT2Config(vocab_size=64, n_embd=32, n_layer=1, n_head=2, n_positions=64))
    found = downstream.encoder_of(gpt)
    assert found.module is gpt.transformer and found.pool == "last"

    class Distilled(nn.Module):  # a distillation wrapper: the student is what gets fine-tuned
        def __init__(self) -> None:
            super().__init__()
            self.student, self.teacher = _bert(1), _bert(2)

    wrapper = Distilled()
    assert downstream.encoder_of(wrapper).module is wrapper.student.bert
    with pytest.raises(ExplorerError, match="encoder_of"):
        downstream.encoder_of(nn.Linear(2, 2))


def test_probe_runs_on_electra_and_spanbert_and_a_causal_lm(text):
    from transformers import ElectraConfig, GPT2Config, GPT2LMHeadModel

    from explorer.architecture.custom_models import ElectraPair, SpanBert

    size = len(vocab.tokenizer())
    disc = ElectraConfig(vocab_size=size, embedding_size=32, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64)
    gen = ElectraConfig(vocab_size=size, embedding_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=1,
                        intermediate_size=32, max_position_embeddings=64)
    gpt = GPT2LMHeadModel(GPT2Config(vocab_size=size, n_embd=32, n_layer=1, n_head=2, n_positions=64))
    for model in (ElectraPair(gen, disc), SpanBert(_bert().config), gpt):
        result = downstream.probe(model, text, TINY)
        assert 0.0 <= result.accuracy <= 1.0


def test_bad_settings_and_too_little_text_say_what_to_do(text):
    with pytest.raises(ExplorerError, match="Probe settings"):
        downstream.probe(_bert(), text, ProbeSpec(steps=0))
    with pytest.raises(ExplorerError, match="Probe settings"):
        downstream.probe(_bert(), text, ProbeSpec(seq_len=4))
    tiny = corpus.Corpus("t", (("the list is sorted",),), (("a b",),))
    with pytest.raises(ExplorerError, match="too few probe examples"):
        downstream.examples(tiny, "heldout", 8, 0, 32)
