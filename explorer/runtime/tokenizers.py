"""The tokenizer a loaded model runs with: its checkpoint's own, or the one shipped for its catalog variant.

A save_pretrained directory brings its tokenizer files (:func:`checkpoint_tokenizer`); a random-weight
model uses the tokenizer shipped in ``assets/tokenizers`` for its variant (:func:`shipped_tokenizer`),
with RoBERTa's special tokens in front of GPT-2's vocabulary (:func:`roberta_tokenizer`) and a
``[MASK]`` added where a stand-in tokenizer has none (:func:`tokenizer_with_mask`).
:func:`explorer.runtime.loading.load_model` calls these; shared tokenizers are cached: never mutate one.

>>> shipped_tokenizer("gpt2", "roberta").mask_token
'<mask>'
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path

from explorer.architecture.catalog import Variant
from explorer.architecture.modeltypes import ROBERTA_STYLE_TOKENIZER_TYPES
from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer, as_tokenizer
from explorer.core.locks import is_locked, lock_of, shared

__all__ = ["checkpoint_tokenizer", "is_locked", "lock_of", "roberta_tokenizer", "shared", "shipped_tokenizer",
           "tokenizer_with_mask"]

TINY_VOCAB = 5  # what AutoTokenizer silently returns for a directory without tokenizer files

@lru_cache(maxsize=1)
def roberta_tokenizer() -> Tokenizer:
    """A RoBERTa-style tokenizer (<s>=0, <pad>=1, </s>=2, <unk>=3, <mask> last) from GPT-2's files.

    RoBERTa reuses GPT-2's byte-level BPE with fairseq's special tokens in front; the ids of
    ordinary tokens are GPT-2's shifted by 4 (the published RoBERTa order differs, which only
    matters for random-weight models, the only ones that use this tokenizer). pad must be a
    small id: RoBERTa's position embeddings use it as their padding index.
    """
    # lazy: transformers takes seconds to import, and `python -m explorer models` never builds a tokenizer
    from transformers import AddedToken, RobertaTokenizer

    from explorer.tokenization.registry import TOKENIZER_DIR  # imports transformers at its top

    folder = TOKENIZER_DIR / "gpt2"
    gpt2 = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for token in sorted(gpt2, key=gpt2.__getitem__):
        if token not in vocab and token != "<|endoftext|>":
            vocab[token] = len(vocab)
    vocab["<mask>"] = len(vocab)
    lines = (folder / "merges.txt").read_text(encoding="utf-8").splitlines()
    merges = [tuple(line.split()) for line in lines if line and not line.startswith("#version")]
    # lstrip: " <mask>" must not leave a stray "Ġ" piece before the mask (as RoBERTa's own mask token).
    # transformers types merges and mask_token as str only; it takes tuples and an AddedToken.
    mask = AddedToken("<mask>", lstrip=True)
    return as_tokenizer(shared(RobertaTokenizer(vocab=vocab, merges=merges, mask_token=mask,  # type: ignore[arg-type]
                                                model_max_length=512)))


def shipped_tokenizer(name: str, model_type: str | None = None) -> Tokenizer:
    """The tokenizer shipped in assets for a catalog tokenizer name (shared: never mutate).

    GPT-2's files serve RoBERTa-family models too, with RoBERTa's special tokens added.
    """
    from explorer import tokenization  # imports transformers at its top

    if name == "gpt2" and model_type in ROBERTA_STYLE_TOKENIZER_TYPES:
        return roberta_tokenizer()
    return as_tokenizer(tokenization.load_tokenizer(name))


@lru_cache(maxsize=8)
def tokenizer_with_mask(name: str, model_type: str | None = None) -> Tokenizer:
    """The shipped tokenizer, plus a ``[MASK]`` token when its files have none (a private copy).

    DeBERTa-v3, XLM and XLM-R are catalogued with a stand-in tokenizer (T5's or GPT-2's files)
    that has no mask token; random-weight masked LMs still need one to show their code path.
    """
    tok = shipped_tokenizer(name, model_type)
    if tok.mask_token is not None:
        return tok
    tok = copy.deepcopy(tok)  # never mutate the shared, cached tokenizer
    tok.add_special_tokens({"mask_token": "[MASK]"})
    return shared(tok)


def checkpoint_tokenizer(path: Path, variant: Variant | None) -> Tokenizer:
    """The directory's own tokenizer, else the variant's shipped one (same vocabulary)."""
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)
    except (OSError, ValueError):  # no / unreadable tokenizer files (JSON, encoding): fall back below
        tok = None
    if tok is not None and len(tok) > TINY_VOCAB:  # config-only dirs silently give a 5-token tokenizer
        return as_tokenizer(shared(tok))  # held by the model cache, used by every session
    if variant is not None:
        return shipped_tokenizer(variant.tokenizer, variant.model_type)
    raise ExplorerError(f"{path} has no tokenizer files (tokenizer.json or vocab): save the tokenizer "
                        "with tok.save_pretrained into the same directory.")
