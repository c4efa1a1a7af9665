"""The five shipped tokenizers: their specs, their files, and loading them offline.

Five tokenizers cover the three algorithms the catalog's variants use:

- WordPiece: ``bert-base-uncased`` (lower-cases, strips accents) and ``bert-base-cased``.
- Byte-level BPE: ``gpt2``; RoBERTa, BART and Longformer use the very same merges (only the
  special tokens and the id order differ), so their *pieces* are GPT-2's.
- SentencePiece unigram: ``t5`` (with its 100 ``<extra_id_N>`` sentinels) and ``bigbird``.

transformers 5 traps handled here: ``BertTokenizer(vocab_file=...)``
is silently ignored (we pass ``vocab=``), ``model_max_length`` defaults to ~1e30 (we set the
published limit), and the cased vocabulary needs ``do_lower_case=False`` at construction.

>>> get_spec("gpt2").algorithm, get_spec("gpt2").model_max_length
('byte-level BPE', 1024)
>>> resolve_names(["t5", "gpt2", "t5"])
['t5', 'gpt2']
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import lru_cache

from transformers import (
    BertTokenizer,
    BigBirdTokenizer,
    GPT2Tokenizer,
    PreTrainedTokenizerBase,
    T5Tokenizer,
)

from explorer import ASSETS
from explorer.architecture import catalog
from explorer.core.errors import ExplorerError, shorten
from explorer.core.locks import shared

__all__ = [
    "algorithm_of", "label_of",
    "ENCODE_LOCK", "TOKENIZERS", "TOKENIZER_DIR", "TokenizerSpec", "VariantTokenizer", "get_spec",
    "load_tokenizer", "resolve_names", "variant_tokenizers",
]

TOKENIZER_DIR = ASSETS / "tokenizers"
# The Rust backend keeps truncation/padding state on the shared (cached) tokenizer object, so
# two Streamlit sessions encoding at once could clash ("Already borrowed"): serialize calls.
ENCODE_LOCK = threading.Lock()


@dataclass(frozen=True)
class TokenizerSpec:
    """What a learner needs to know about one shipped tokenizer."""

    name: str
    label: str
    algorithm: str  # "WordPiece" | "byte-level BPE" | "SentencePiece (unigram)"
    directory: str  # under assets/tokenizers
    files: tuple[str, ...]
    model_max_length: int  # the published position limit of the reference checkpoint
    lowercase: bool
    continuation: str  # how a piece says "I continue the previous word" or "I start a word"
    shared_by: tuple[str, ...]  # model families whose pieces are exactly these

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


TOKENIZERS: dict[str, TokenizerSpec] = {
    "bert-base-uncased": TokenizerSpec(
        "bert-base-uncased", "BERT uncased (WordPiece)", "WordPiece", "bert-base-uncased",
        ("vocab.txt",), 512, True, "'##' marks a piece that continues the previous one",
        ("BERT uncased", "DistilBERT", "ELECTRA", "MiniLM", "TinyBERT", "MobileBERT"),
    ),
    "bert-base-cased": TokenizerSpec(
        "bert-base-cased", "BERT cased (WordPiece)", "WordPiece", "bert-base-cased",
        ("vocab.txt",), 512, False, "'##' marks a piece that continues the previous one",
        ("BERT cased", "SpanBERT"),
    ),
    "gpt2": TokenizerSpec(
        "gpt2", "GPT-2 (byte-level BPE)", "byte-level BPE", "gpt2", ("vocab.json", "merges.txt"),
        1024, False, "'Ġ' (an encoded space, drawn ␣ here) marks a piece that starts a new word",
        ("GPT-2", "RoBERTa", "BART", "Longformer", "DeBERTa (v1)", "GPT-Neo", "GPT-J"),
    ),
    "t5": TokenizerSpec(
        "t5", "T5 (SentencePiece)", "SentencePiece (unigram)", "t5", ("spiece.model",), 512, False,
        "'▁' marks a piece that starts a new word", ("T5 (all original sizes)",),
    ),
    "bigbird": TokenizerSpec(
        "bigbird", "BigBird (SentencePiece)", "SentencePiece (unigram)", "bigbird-roberta-base",
        ("spiece.model",), 4096, False, "'▁' marks a piece that starts a new word",
        ("BigBird-RoBERTa",),
    ),
}


def get_spec(name: str) -> TokenizerSpec:
    """The spec of a shipped tokenizer; an unknown name lists the valid ones."""
    if name not in TOKENIZERS:
        raise ExplorerError(
            f"Unknown tokenizer {shorten(name)!r}. Choose one of: {', '.join(TOKENIZERS)}."
        )
    return TOKENIZERS[name]


def label_of(name: str) -> str:
    """How a result is named on screen: a shipped tokenizer's label, else its own name (a served model's
    tokenizer, ``served:NAME``).

    >>> label_of("gpt2"), label_of("served:gemma")
    ('GPT-2 (byte-level BPE)', 'served:gemma')
    """
    return TOKENIZERS[name].label if name in TOKENIZERS else name


def algorithm_of(name: str) -> str:
    """A shipped tokenizer's algorithm; a served model's is its server's own (asked through its API)."""
    return TOKENIZERS[name].algorithm if name in TOKENIZERS else "the server's own"


def resolve_names(names: Iterable[str] | None) -> list[str]:
    """Validated tokenizer names (all of them for None), duplicates dropped, order kept."""
    picked = list(TOKENIZERS) if names is None else list(dict.fromkeys(n.strip() for n in names))
    if not picked:
        raise ExplorerError(f"Pick at least one tokenizer: {', '.join(TOKENIZERS)}.")
    for n in picked:
        get_spec(n)
    return picked


def _file(spec: TokenizerSpec, filename: str) -> str:
    path = TOKENIZER_DIR / spec.directory / filename
    if not path.is_file():
        raise ExplorerError(f"Tokenizer file {path} is missing: restore assets/tokenizers from git.")
    return str(path)


@lru_cache(maxsize=len(TOKENIZERS))
def load_tokenizer(name: str) -> PreTrainedTokenizerBase:
    """The tokenizer ``name`` built from its published files (cached: never mutate it).

    Shared between threads (Streamlit sessions): its calls take its own lock (:mod:`explorer.core.locks`),
    because the Rust backend stores truncation and padding settings on the object.
    """
    spec = get_spec(name)
    limit = spec.model_max_length
    tok: PreTrainedTokenizerBase
    if spec.algorithm == "WordPiece":
        # vocab= (not vocab_file=, which transformers 5 silently ignores -> 5-token vocab).
        tok = BertTokenizer(vocab=_file(spec, "vocab.txt"), do_lower_case=spec.lowercase,
                            model_max_length=limit)
    elif name == "gpt2":
        tok = GPT2Tokenizer(vocab=_file(spec, "vocab.json"), merges=_file(spec, "merges.txt"),
                            model_max_length=limit)
    elif name == "t5":
        _file(spec, "spiece.model")  # clear error instead of from_pretrained's hub message
        tok = T5Tokenizer.from_pretrained(str(TOKENIZER_DIR / spec.directory), extra_ids=100,
                                          model_max_length=limit)
    else:
        _file(spec, "spiece.model")
        tok = BigBirdTokenizer.from_pretrained(str(TOKENIZER_DIR / spec.directory), model_max_length=limit)
    # A silently empty vocabulary is the classic failure mode (see module docstring).
    if len(tok) <= 1000:
        raise ExplorerError(f"Tokenizer {shorten(name)!r} loaded with only {len(tok)} tokens: files are damaged.")
    return shared(tok)


@dataclass(frozen=True)
class VariantTokenizer:
    """Which shipped tokenizer the app uses for one catalog variant, and why."""

    key: str
    name: str
    tokenizer: str  # the catalog's "tokenizer" field: one of TOKENIZERS
    own: bool  # True when it is the variant's own tokenizer (the catalog has no note)
    note: str  # the catalog's "tokenizer_note": what differs, which file stands in

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def variant_tokenizers() -> list[VariantTokenizer]:
    """Every catalog variant with the tokenizer the app uses for it (catalog order).

    A catalog entry naming a tokenizer that is not shipped is an error in assets/catalog.json.
    """
    rows = []
    for v in catalog.load_catalog().values():
        if v.tokenizer not in TOKENIZERS:
            raise ExplorerError(f"Catalog entry {shorten(v.key)!r} names tokenizer {shorten(v.tokenizer)!r}, which is "
                                f"not shipped ({', '.join(TOKENIZERS)}): fix assets/catalog.json.")
        rows.append(VariantTokenizer(v.key, v.name, v.tokenizer, not v.tokenizer_note, v.tokenizer_note or ""))
    return rows
