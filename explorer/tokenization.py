"""Tokenizers built from the published vocabulary files in ``assets/tokenizers`` (offline).

Five tokenizers cover the three algorithms the catalog's variants use:

- WordPiece: ``bert-base-uncased`` (lower-cases, strips accents) and ``bert-base-cased``.
- Byte-level BPE: ``gpt2``; RoBERTa, BART and Longformer use the very same merges (only the
  special tokens and the id order differ), so their *pieces* are GPT-2's.
- SentencePiece unigram: ``t5`` (with its 100 ``<extra_id_N>`` sentinels) and ``bigbird``.

transformers 5 traps handled here (see /work/shared/notes): ``BertTokenizer(vocab_file=...)``
is silently ignored (we pass ``vocab=``), ``model_max_length`` defaults to ~1e30 (we set the
published limit), and the cased vocabulary needs ``do_lower_case=False`` at construction.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from transformers import (
    BertTokenizer,
    BigBirdTokenizer,
    GPT2Tokenizer,
    PreTrainedTokenizerBase,
    T5Tokenizer,
)

from explorer import ASSETS
from explorer.errors import ExplorerError

TOKENIZER_DIR = ASSETS / "tokenizers"


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

    def to_dict(self) -> dict[str, Any]:
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
        1024, False, "'Ġ' (an encoded space) marks a piece that starts a new word",
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
            f"Unknown tokenizer {name!r}. Choose one of: {', '.join(TOKENIZERS)}."
        )
    return TOKENIZERS[name]


def _file(spec: TokenizerSpec, filename: str) -> str:
    path = TOKENIZER_DIR / spec.directory / filename
    if not path.is_file():
        raise ExplorerError(f"Tokenizer file {path} is missing: restore assets/tokenizers from git.")
    return str(path)


@lru_cache(maxsize=len(TOKENIZERS))
def load_tokenizer(name: str) -> PreTrainedTokenizerBase:
    """The tokenizer ``name`` built from its published files (cached: never mutate it).

    Shared between threads (Streamlit sessions): call it without changing truncation or
    padding settings where possible, because the Rust backend stores them on the object.
    """
    spec = get_spec(name)
    limit = spec.model_max_length
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
        raise ExplorerError(f"Tokenizer {name!r} loaded with only {len(tok)} tokens: files are damaged.")
    return tok


@dataclass(frozen=True)
class SpecialTokens:
    """The special tokens of one tokenizer and what it adds around a single sequence."""

    name: str
    cls: str | None
    sep: str | None
    bos: str | None
    eos: str | None
    pad: str | None
    unk: str | None
    mask: str | None  # the token an MLM objective substitutes (T5: its first sentinel)
    sentinels: tuple[str, ...]  # T5's <extra_id_0..99>, in order
    template: tuple[str, ...]  # e.g. ("[CLS]", "$A", "[SEP]"); "$A" is the text
    ids: dict[str, int]  # every special token string -> id

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@lru_cache(maxsize=len(TOKENIZERS))
def special_tokens(name: str) -> SpecialTokens:
    """Special tokens of ``name``, read from the loaded tokenizer (not hard-coded)."""
    tok = load_tokenizer(name)
    sentinels = tuple(f"<extra_id_{i}>" for i in range(100)) if name == "t5" else ()
    probe = tok("x")["input_ids"]  # what the post-processor wraps around a one-piece text
    content = tok("x", add_special_tokens=False)["input_ids"]
    marks = ["$A" if i in content else tok.convert_ids_to_tokens(i) for i in probe]
    # "x" may be several pieces (T5: "▁", "x"): collapse the text to one "$A".
    template = tuple(m for k, m in enumerate(marks) if m != "$A" or k == 0 or marks[k - 1] != "$A")
    mask = tok.mask_token or (sentinels[0] if sentinels else None)
    specials = list(tok.all_special_tokens)
    return SpecialTokens(
        name, tok.cls_token, tok.sep_token, tok.bos_token, tok.eos_token, tok.pad_token,
        tok.unk_token, mask, sentinels, template,
        {t: int(tok.convert_tokens_to_ids(t)) for t in specials},
    )


def mask_token(name: str) -> str | None:
    """The token a masking objective puts in: ``[MASK]`` (BERT, BigBird), ``<extra_id_0>``
    (T5, whose objective replaces each span by the next sentinel) or None (GPT-2 is trained
    left to right and has no mask token; RoBERTa's ``<mask>`` is not in GPT-2's vocabulary)."""
    return special_tokens(name).mask
