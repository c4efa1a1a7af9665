"""NSP, SOP and StructBERT: class balance, pair construction, trigram shuffling."""

from __future__ import annotations

import math
from collections import Counter

from explorer.objectives import STRATEGIES, run
from explorer.objectives.base import sentences
from explorer.objectives.stats import draw_stats
from explorer.objectives.text import EXAMPLE_TEXT, prepare


def prep(name: str, text: str = EXAMPLE_TEXT):
    s = STRATEGIES[name]
    return prepare(text, s.tokenizer, s.frame)


def balanced(counts: dict[str, int], classes: tuple[str, ...]) -> bool:
    n, p = sum(counts.values()), 1 / len(classes)
    return set(counts) == set(classes) and all(abs(counts[c] / n - p) < 4.5 * math.sqrt(p * (1 - p) / n)
                                               for c in classes)


def test_class_balance() -> None:
    for name, classes in [("nsp", ("IsNext", "NotNext")), ("sop", ("in order", "swapped")),
                          ("structbert-sentence", ("next", "previous", "random"))]:
        p = prep(name)
        assert balanced(draw_stats(name, p.tokens, p.vocab, seed=0, n_draws=4000).labels, classes), name


def test_pairs_are_built_from_the_right_sentences() -> None:
    p = prep("nsp")
    sents = [tuple(p.tokens[i] for i in s) for s in sentences(p.tokens)]
    for d in range(300):
        for name in ("nsp", "sop", "structbert-sentence"):
            r = run(name, p.tokens, 0, p.vocab, epoch=d)
            a, b = r.sentence_a, r.sentence_b
            assert r.input_tokens == ("[CLS]", *a, "[SEP]", *b, "[SEP]")
            assert r.segment_ids == (0,) * (len(a) + 2) + (1,) * (len(b) + 1)
            if r.label in ("IsNext", "in order", "next"):
                assert sents.index(b) == sents.index(a) + 1
            elif r.label in ("swapped", "previous"):
                assert sents.index(b) == sents.index(a) - 1
            else:  # random: from another document
                assert b not in sents and b in p.vocab.corpus


def test_one_sentence_text_still_works() -> None:
    p = prep("sop", "A single sentence without any partner")
    r = run("sop", p.tokens, 0, p.vocab)
    assert r.sentence_a and r.sentence_b  # the two halves
    q = prep("nsp", "Only one.")
    assert all(run("nsp", q.tokens, s, q.vocab).label == "NotNext" for s in range(20))


def test_structbert_word_shuffles_trigrams() -> None:
    p = prep("structbert-word")
    seen = Counter()
    for d in range(500):
        r = run("structbert-word", p.tokens, 0, p.vocab, epoch=d)
        assert sorted(r.input_tokens) == sorted(p.tokens)
        for (s, e), perm in zip(r.trigrams, r.permutations, strict=True):
            assert e - s == 3 and r.input_tokens[s:e] == tuple(p.tokens[s + k] for k in perm)
            assert r.targets[s:e] == p.tokens[s:e]
            seen[perm] += 1
    assert len(seen) == 6  # all 3! orders occur (the identity included: it is a random shuffle)
