"""Special tokens: what each tokenizer wraps around a text, and what each model family sees.

Everything is read from the loaded tokenizers (their post-processors), never hard-coded, except
RoBERTa's ``<s> A </s></s> B </s>`` layout, which is built from the shipped roberta-base config
because RoBERTa, BART and Longformer share GPT-2's merges but not its (empty) post-processor.

>>> special_tokens("bert-base-uncased").template
('[CLS]', '$A', '[SEP]')
>>> family_tokens("RoBERTa / BART / Longformer", "Hi there", "Bye")
('<s>', 'Hi', 'Ġthere', '</s>', '</s>', 'By', 'e', '</s>')
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from tokenizers.processors import RobertaProcessing

from explorer import ASSETS
from explorer.core.errors import ExplorerError, shorten
from explorer.tokenization.registry import ENCODE_LOCK, TOKENIZERS, load_tokenizer

if TYPE_CHECKING:  # typing only
    from transformers import PreTrainedTokenizerBase

__all__ = ["FAMILIES", "ROBERTA_FAMILY", "SpecialTokens", "family_tokens", "mask_token", "special_tokens"]


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

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _token(tok: PreTrainedTokenizerBase, token_id: int) -> str:
    """One id's token (transformers types the call for a list too, hence the check)."""
    token = tok.convert_ids_to_tokens(token_id)
    assert isinstance(token, str)  # one id in, one token out
    return token


def _token_id(tok: PreTrainedTokenizerBase, token: str) -> int:
    """One token's id (transformers types the call for a list too, hence the check)."""
    found = tok.convert_tokens_to_ids(token)
    assert isinstance(found, int)  # one token in, one id out
    return found


@lru_cache(maxsize=len(TOKENIZERS))
def special_tokens(name: str) -> SpecialTokens:
    """Special tokens of ``name``, read from the loaded tokenizer (not hard-coded)."""
    tok = load_tokenizer(name)
    sentinels = tuple(f"<extra_id_{i}>" for i in range(100)) if name == "t5" else ()
    probe = tok("x")["input_ids"]  # what the post-processor wraps around a one-piece text
    content = tok("x", add_special_tokens=False)["input_ids"]
    marks = ["$A" if i in content else _token(tok, i) for i in probe]
    # "x" may be several pieces (T5: "▁", "x"): collapse the text to one "$A".
    template = tuple(m for k, m in enumerate(marks) if m != "$A" or k == 0 or marks[k - 1] != "$A")
    mask = tok.mask_token or (sentinels[0] if sentinels else None)
    specials = list(tok.all_special_tokens)
    return SpecialTokens(
        name, tok.cls_token, tok.sep_token, tok.bos_token, tok.eos_token, tok.pad_token,
        tok.unk_token, mask, sentinels, template,
        {t: _token_id(tok, t) for t in specials},
    )


def mask_token(name: str) -> str | None:
    """The token a masking objective puts in: ``[MASK]`` (BERT, BigBird), ``<extra_id_0>``
    (T5, whose objective replaces each span by the next sentinel) or None (GPT-2 is trained
    left to right and has no mask token; RoBERTa's ``<mask>`` is not in GPT-2's vocabulary)."""
    return special_tokens(name).mask


# Which shipped tokenizer gives each family's pieces. RoBERTa, BART and Longformer use GPT-2's
# byte-level BPE merges unchanged; only their special tokens (and the id order) differ.
FAMILIES: dict[str, str] = {
    "BERT / DistilBERT / ELECTRA": "bert-base-uncased",
    "RoBERTa / BART / Longformer": "gpt2",
    "GPT-2": "gpt2",
    "T5": "t5",
    "BigBird": "bigbird",
}
ROBERTA_FAMILY = "RoBERTa / BART / Longformer"


@lru_cache(maxsize=1)
def _roberta_processor() -> RobertaProcessing:
    """RoBERTa's published post-processor: ``<s> A </s>`` and ``<s> A </s></s> B </s>``.

    The ids of <s> and </s> are read from the shipped roberta-base config (bos/eos).
    """
    cfg = json.loads((ASSETS / "configs" / "roberta-base.json").read_text(encoding="utf-8"))
    return RobertaProcessing(("</s>", int(cfg["eos_token_id"])), ("<s>", int(cfg["bos_token_id"])))


def family_tokens(family: str, text: str, pair: str | None = None) -> tuple[str, ...]:
    """The tokens a model family sees for ``text`` (and an optional second segment ``pair``).

    Uses each family's own post-processor, so the special tokens come from the tokenizer
    itself: [CLS]/[SEP] (BERT, BigBird), <s>/</s> (RoBERTa), </s> only (T5), nothing (GPT-2).
    """
    if family not in FAMILIES:
        raise ExplorerError(f"Unknown model family {shorten(family)!r}. Choose one of: {', '.join(FAMILIES)}.")
    backend = load_tokenizer(FAMILIES[family]).backend_tokenizer
    with ENCODE_LOCK:
        a = backend.encode(text, add_special_tokens=False)
        b = backend.encode(pair, add_special_tokens=False) if pair is not None else None
    processor = _roberta_processor() if family == ROBERTA_FAMILY else backend.post_processor
    return tuple(processor.process(a, b, add_special_tokens=True).tokens)
