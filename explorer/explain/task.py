"""What a model is asked to explain, from its kind and the text, and how it loads for it.

One text box serves every model side by side, so the task is read off the model and the text:

- a decoder continues the text (``next-token``), or, when the text has a blank (``___``, ``[MASK]``), fills
  it (``fill-in``: the Fill-mask page's and the Spans page's decoder column);
- a masked LM predicts its blank (``masked``), through its MLM head;
- T5 and BART fill their blank as a span (``span``), the decoder's layers reading the encoder's;
- a sentence encoder without a head (all-MiniLM-L6-v2) compares two sentences (``similarity``).

>>> of("decoder", True, "The capital of France is"), of("decoder", True, "The capital is ___.")
('next-token', 'fill-in')
>>> of("encoder", True, "Paris is the [MASK] of France."), of("encoder", False, "A man eats.")
('masked', 'similarity')
>>> of("encoder-decoder", True, "Thank you <extra_id_0> me.")
'span'
"""

from __future__ import annotations

import re

from explorer.core.errors import ExplorerError
from explorer.core.userinput import MARKER, SPAN_MARKER
from explorer.runtime.resolve import ModelRef

__all__ = ["DESCRIBED", "TASKS", "blank_marker", "has_head", "loading_task", "of"]

TASKS = ("next-token", "fill-in", "masked", "span", "similarity")
DESCRIBED = {
    "next-token": "the next token after the text",
    "fill-in": "the decoder's answer for the blank, with the words after it",
    "masked": "the masked LM's token at the blank",
    "span": "the span the encoder-decoder writes for the blank",
    "similarity": "the cosine similarity of the two sentences' embeddings",
}


def has_head(ref: ModelRef) -> bool:
    """Whether the model predicts tokens (:attr:`~explorer.runtime.resolve.ModelRef.predicts_tokens`)."""
    return ref.predicts_tokens


def loading_task(ref: ModelRef) -> str:
    """The task :func:`explorer.runtime.loading.load_model` loads ``ref`` with for this page (a bare encoder as it
    is: the lens and attribution read its sentence similarity)."""
    return ref.head_task(head_optional=True)


def of(family: str | None, head: bool, text: str) -> str:
    """The explained task of a model of ``family`` (with or without a head) on ``text`` (see the module doc)."""
    if family == "decoder":
        return "fill-in" if MARKER.search(text) else "next-token"
    if family == "encoder-decoder":
        return "span"
    if family == "encoder":
        return "masked" if head else "similarity"
    raise ExplorerError("This model's kind (encoder, decoder or encoder-decoder) is unknown, so what it predicts "
                        "cannot be explained: pick a catalog model or a directory with a config.json.")


def blank_marker(task: str) -> re.Pattern[str]:
    """The blank grammar of ``task``: T5's sentinels count as blanks only where spans are filled."""
    return SPAN_MARKER if task == "span" else MARKER
