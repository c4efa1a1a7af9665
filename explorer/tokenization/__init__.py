"""Tokenizers built from the published vocabulary files in ``assets/tokenizers`` (offline).

One module per noun; the package names the entry points (load a tokenizer, tokenize, compare, the shipped
tokenizers and presets) and anything else is imported from its module:

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

from explorer.tokenization.registry import TOKENIZERS, label_of, load_tokenizer
from explorer.tokenization.split import Tokenization, compare, tokenize
from explorer.tokenization.table import PRESETS

__all__ = ["PRESETS", "TOKENIZERS", "Tokenization", "compare", "label_of", "load_tokenizer", "tokenize"]
