"""A decoder (causal LM) on the fill-in and QA tasks the masked LMs do.

- :mod:`explorer.tasks.causal.scoring`: token-level scoring: the text before a blank runs once and its
  KV cache is shared by every candidate; whole-text log-probabilities; a short beam for answers
  of several tokens.
- :mod:`explorer.tasks.causal.fill`: blanks in a typed text -> candidates from the left context, ranked
  again by the whole sentence (both rankings kept: the page teaches why BERT reads both sides).
- :mod:`explorer.tasks.causal.answer`: generative question answering, the answer located in the context.

The package names the two entry points and their results; anything else is imported from its module.
"""

from __future__ import annotations

from explorer.tasks.causal.answer import GenerativeAnswer, answer_question
from explorer.tasks.causal.fill import CausalFill, causal_fill

__all__ = ["CausalFill", "GenerativeAnswer", "answer_question", "causal_fill"]
