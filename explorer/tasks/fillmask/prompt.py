"""A fill-mask prompt checked and written in each model's own mask token.

The user types one prompt with a generic marker (``[MASK]``, ``<mask>`` or ``___``, any case); each model gets it
with its own mask token (:func:`model_prompt`). A T5/BART span sentinel is refused with its own message.

>>> clean_text("The capital of France is ___.")
'The capital of France is ___.'
"""

from __future__ import annotations

import re
import unicodedata

from explorer.core.errors import ExplorerError
from explorer.core.limits import FILL_MASK_PROMPT_CHARS
from explorer.core.userinput import MARKER, SENTINEL

__all__ = ["FOREIGN_MASKS", "MARKER", "MAX_MASKS", "PRESETS", "clean_text", "model_prompt"]

# Other models' span markers: refused with a message rather than sent to a masked LM as text
# (T5's sentinel is a blank on the Spans page: explorer.core.userinput.SPAN_MARKER).
FOREIGN_MASKS = re.compile(rf"{SENTINEL}|<X>|\[MASK_\d+\]|<\|mask\|>", re.IGNORECASE)
MAX_MASKS = 20

PRESETS: dict[str, tuple[str, ...]] = {
    "trivia": ("The capital of France is [MASK].", "Albert Einstein was born in [MASK]."),
    "course probes": ("Stanford University is located in [MASK].",),  # the course's own probing sentence
    "syntax": ("The keys to the cabinet [MASK] on the table.", "She [MASK] to the store yesterday."),
    "coreference": ("The trophy did not fit in the suitcase because [MASK] was too big.",),
    "lexical semantics": ("A [MASK] is a kind of bird.", "The opposite of hot is [MASK]."),
    "sentiment": ("The movie was terrible. I felt [MASK].", "What a wonderful day, I am so [MASK]!"),
    "reasoning": ("If it is raining, the ground gets [MASK].", "Ice is water that is [MASK]."),
    "arithmetic": ("Two plus two equals [MASK].", "Ten minus three is [MASK]."),
    "bias": ("The doctor examined the patient. Then [MASK] said the results were fine.",
             "The nurse examined the patient. Then [MASK] said the results were fine."),
    "several masks": ("The [MASK] sat on the [MASK].",),
}


def clean_text(text: str | None, require_mask: bool = True) -> str:
    """The prompt with control characters blanked; a clear ExplorerError for unusable input."""
    text = (text or "").strip()
    if not text:
        raise ExplorerError("The prompt is empty: type a sentence with [MASK] (or ___) where a word is missing.")
    if len(text) > FILL_MASK_PROMPT_CHARS:
        raise ExplorerError(f"The prompt has {len(text):,} characters; the limit is {FILL_MASK_PROMPT_CHARS:,}. "
                            "Shorten it.")
    # Control characters (NUL, escape codes...) confuse tokenizers and terminals; keep \n and \t.
    text = "".join(" " if unicodedata.category(c) == "Cc" and c not in "\n\t" else c for c in text)
    foreign = FOREIGN_MASKS.search(text)
    if foreign:
        raise ExplorerError(f"{foreign.group(0)} is a span sentinel of another model (T5/BART infilling), not a "
                            "fill-mask blank: write [MASK] or ___ instead.")
    n = len(MARKER.findall(text))
    if require_mask and n == 0:
        raise ExplorerError("There is no mask in the prompt: put [MASK] (or <mask>, or ___) where a word is missing.")
    if n > MAX_MASKS:
        raise ExplorerError(f"The prompt has {n} masks; at most {MAX_MASKS} are supported: remove some.")
    return text


def model_prompt(text: str, tokenizer, label: str) -> str:
    """The prompt with every generic marker replaced by this tokenizer's own mask token."""
    if not tokenizer.mask_token:
        raise ExplorerError(f"{label} has no mask token, so it cannot fill masks: pick a masked language model.")
    return MARKER.sub(lambda _: tokenizer.mask_token, text)
