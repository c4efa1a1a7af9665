"""Tokenizers built from the published vocabulary files in ``assets/tokenizers`` (offline).

One module per noun; this package re-exports the public API, so ``tokenization.X`` works for all:

- :mod:`~explorer.tokenization.registry`: the five shipped tokenizers (:data:`TOKENIZERS`), their
  files, :func:`load_tokenizer` (with the transformers 5 traps handled), catalog variant -> tokenizer.
- :mod:`~explorer.tokenization.split`: one text through one tokenizer (:class:`Tokenization`:
  tokens, ids, spans, word starts, truncation point) and :func:`compare` across tokenizers.
- :mod:`~explorer.tokenization.pieces`: byte-level BPE pieces made readable (``Ġworld`` -> ``␣world``).
- :mod:`~explorer.tokenization.specials`: special tokens per tokenizer and per model family.
- :mod:`~explorer.tokenization.table`: example texts, display and CSV rows, notices about long texts.

>>> from explorer import tokenization as tk
>>> [(t.name, t.count) for t in tk.compare("Tokenizers split words", ["bert-base-uncased", "gpt2"])]
[('bert-base-uncased', 7), ('gpt2', 4)]
>>> tk.tokenize("gpt2", "Hello world").pieces
('Hello', '␣world')
"""

from __future__ import annotations

from explorer.tokenization.pieces import readable_piece
from explorer.tokenization.registry import (
    TOKENIZER_DIR,
    TOKENIZERS,
    TokenizerSpec,
    VariantTokenizer,
    algorithm_of,
    get_spec,
    label_of,
    load_tokenizer,
    resolve_names,
    variant_tokenizers,
)
from explorer.tokenization.specials import (
    FAMILIES,
    ROBERTA_FAMILY,
    SpecialTokens,
    family_tokens,
    mask_token,
    special_tokens,
)
from explorer.tokenization.split import Tokenization, check_text, compare, tokenize
from explorer.tokenization.table import (
    DEFAULT_PRESET,
    PRESETS,
    family_rows,
    join_pieces,
    notices,
    spec_rows,
    summary_rows,
    token_rows,
    word_split_rows,
)

__all__ = [
    "DEFAULT_PRESET", "FAMILIES", "PRESETS", "ROBERTA_FAMILY", "TOKENIZERS", "TOKENIZER_DIR",
    "SpecialTokens", "Tokenization", "TokenizerSpec", "VariantTokenizer", "algorithm_of", "check_text", "compare",
    "family_rows", "family_tokens", "get_spec", "join_pieces", "label_of", "load_tokenizer", "mask_token", "notices",
    "readable_piece", "resolve_names", "spec_rows", "special_tokens", "summary_rows", "token_rows",
    "tokenize", "variant_tokenizers", "word_split_rows",
]
