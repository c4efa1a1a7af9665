"""Control tokens: ids a decoder must never offer as words for a blank (the one home of that rule).

A tokenizer's ``all_special_ids`` is not enough. Gemma 3 lists five (<bos>, <eos>, <unk>, <pad>,
<mask>), yet its vocabulary holds 6,249 more added tokens marked special (<start_of_turn>,
<end_of_turn>, 6,242 <unusedN>), and added tokens *not* marked special that are markup or
multimodal controls: <start_of_image>, <end_of_image>, [multimodal], and HTML tags such as <h1>,
<table>, </td>. A small decoder ranks them high after a short or odd left context ("___" alone
gave <h1>). The rule: every special id, every added token marked special, and every added token
that looks like a control (``<name>``, ``</name>``, ``[name]``, ``<|name|>``), plus rows of the
output layer beyond the tokenizer (padding rows decode to nothing). Added tokens that are plain
text (Gemma's runs of newlines and tabs) stay: they are text, only never an answer on their own
(:func:`is_blank`).

>>> looks_like_control("<start_of_image>"), looks_like_control("</td>"), looks_like_control("[multimodal]")
(True, True, True)
>>> looks_like_control("<3"), looks_like_control(" <b"), looks_like_control("\\n\\n")
(False, False, False)
>>> is_blank(" \\n\\t"), is_blank(" 1879")
(True, False)
"""

from __future__ import annotations

import re

from explorer.core.handles import Tokenizer

__all__ = ["CONTROL_RE", "control_ids", "is_blank", "looks_like_control"]

CONTROL_RE = re.compile(r"<\|[^|<>\s]+\|>|</?[A-Za-z_][\w:-]*>|\[[A-Za-z_][\w:-]*\]")


def looks_like_control(text: str) -> bool:
    """``text`` is one markup/control tag and nothing else."""
    return CONTROL_RE.fullmatch(text) is not None


def is_blank(text: str) -> bool:
    """An answer that would fill a blank with nothing visible (empty or only whitespace)."""
    return not text.strip()


def control_ids(tokenizer: Tokenizer, vocab_size: int | None = None) -> frozenset[int]:
    """Every id of ``tokenizer`` that is a special or control token; with ``vocab_size`` (the output
    layer's rows), also the rows the tokenizer has no token for."""
    ids = {int(i) for i in getattr(tokenizer, "all_special_ids", ())}
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    ids.update(int(i) for i, tok in added.items()
               if getattr(tok, "special", False) or looks_like_control(str(getattr(tok, "content", tok))))
    if vocab_size is not None:
        ids.update(range(len(tokenizer), int(vocab_size)))
    return frozenset(i for i in ids if vocab_size is None or 0 <= i < vocab_size)
