"""The lab tokenizer: one vocabulary for every objective, specials and sentinels at fixed ids."""

from __future__ import annotations

from explorer.training import corpus, vocab


def test_specials_and_sentinels_have_fixed_ids() -> None:
    tok = vocab.tokenizer()
    assert len(tok) == vocab.SIZE
    assert tok.convert_tokens_to_ids(list(vocab.SPECIALS)) == [0, 1, 2, 3, 4]
    assert tok.convert_tokens_to_ids(list(vocab.SENTINELS)) == list(range(5, 5 + len(vocab.SENTINELS)))
    assert tok.mask_token == "[MASK]" and tok.pad_token_id == 0


def test_the_corpus_tokenizes_without_unknown_pieces_and_about_1_3_pieces_a_word() -> None:
    tok = vocab.tokenizer()
    paras = [p for doc in corpus.bundled().heldout for p in doc]
    ids = [i for row in tok(paras, add_special_tokens=False)["input_ids"] for i in row]
    words = sum(len(p.split()) for p in paras)
    assert ids.count(tok.unk_token_id) / len(ids) < 0.001
    assert 1.1 < len(ids) / words < 1.6


def test_objective_vocab_replacements_exclude_every_special() -> None:
    v = vocab.objective_vocab()
    special = set(vocab.SPECIALS) | set(vocab.SENTINELS)
    assert not special & set(v.replacements) and len(v.replacements) == vocab.SIZE - len(special)
    assert v.mask == "[MASK]" and v.cls == "[CLS]" and v.sep == "[SEP]"


def test_learn_puts_specials_first() -> None:
    pieces = vocab.learn(["the cat sat on the mat"] * 50, size=200)
    assert pieces[:5] == list(vocab.SPECIALS) and pieces[5] == "<extra_id_0>" and "cat" in pieces
