"""The lab's one tokenizer: an uncased WordPiece vocabulary learnt from the bundled corpus.

Every variant trains with it, so losses and accuracies compare like with like: BERT's
``[CLS] x [SEP]`` frame, ``[MASK]`` for every masking objective (BART's ``<mask>`` too) and
T5's sentinels ``<extra_id_0>`` ... ``<extra_id_31>``. The vocabulary is a file in
``assets/corpus/vocab.txt`` (made by ``assets/corpus/build_corpus.py`` with :func:`learn`), so
a fresh clone and a saved checkpoint tokenize identically.

>>> tok = tokenizer()
>>> tok.tokenize("The interpreter reads <extra_id_0> line.")
['the', 'interpreter', 'reads', '<extra_id_0>', 'line', '.']
>>> tok.convert_tokens_to_ids(["[PAD]", "[MASK]", "<extra_id_0>"])
[0, 4, 5]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer, as_tokenizer
from explorer.objectives.base import Vocab

__all__ = ["SENTINELS", "SIZE", "SPECIALS", "VOCAB_FILE", "learn", "objective_vocab", "tokenizer"]

VOCAB_FILE = Path(__file__).resolve().parents[2] / "assets" / "corpus" / "vocab.txt"
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
SENTINELS = tuple(f"<extra_id_{i}>" for i in range(32))  # T5 span corruption: ~6 spans in 128 tokens
SIZE = 8192  # small enough that a 128-wide tiny model's embedding is not most of its parameters
MAX_LENGTH = 512


def learn(paragraphs: Iterable[str], size: int = SIZE) -> list[str]:
    """An uncased WordPiece vocabulary (specials and sentinels first) learnt from ``paragraphs``."""
    from tokenizers import BertWordPieceTokenizer

    wp = BertWordPieceTokenizer(lowercase=True, strip_accents=True)
    # limit_alphabet: the corpus's rare characters (box drawing, CJK in examples) become [UNK], not pieces
    wp.train_from_iterator(paragraphs, vocab_size=size, min_frequency=2, limit_alphabet=150,
                           special_tokens=[*SPECIALS, *SENTINELS], show_progress=False)
    vocab = wp.get_vocab()
    return sorted(vocab, key=vocab.__getitem__)


@lru_cache(maxsize=1)
def tokenizer() -> Tokenizer:
    """The lab tokenizer (a BERT WordPiece tokenizer over ``vocab.txt``)."""
    if not VOCAB_FILE.is_file():
        raise ExplorerError("The lab vocabulary assets/corpus/vocab.txt is missing. Restore it with git "
                            "(git checkout -- assets/corpus).")
    from explorer.architecture.build import BUILD_LOCK  # imports torch: the card and model lists need none

    with BUILD_LOCK:  # transformers' lazy class import is not thread-safe (two Lab trainings start at once)
        from transformers import BertTokenizer

        return as_tokenizer(BertTokenizer(vocab=str(VOCAB_FILE), do_lower_case=True, model_max_length=MAX_LENGTH,
                                          additional_special_tokens=list(SENTINELS)))


def objective_vocab(corpus_sentences: Sequence[tuple[str, ...]] = ()) -> Vocab:
    """What ``explorer.objectives`` needs: random replacements from the whole non-special vocabulary.

    ``corpus_sentences`` are token tuples of other documents (NSP's random "B" sentence).
    """
    tok = tokenizer()
    special = set(SPECIALS) | set(SENTINELS)
    words = tuple(t for t in tok.convert_ids_to_tokens(list(range(len(tok)))) if t not in special)
    return Vocab(replacements=words, corpus=tuple(corpus_sentences))
