"""Which family file walks which model type (one line each; a family not here is refused in words).

>>> sorted(SUPPORTED)[:3], family_of("gpt2") is GPT2
(['bert', 'electra', 'gemma3_text'], True)
"""

from __future__ import annotations

from explorer.architecture import anatomy
from explorer.core.errors import ExplorerError
from explorer.internals.forward.bert import BERT
from explorer.internals.forward.family import Family
from explorer.internals.forward.gemma3 import GEMMA3
from explorer.internals.forward.gpt2 import GPT2
from explorer.internals.forward.t5 import T5

__all__ = ["FAMILIES", "SUPPORTED", "family_of"]

FAMILIES: dict[str, Family] = {
    "bert": BERT, "roberta": BERT, "xlm-roberta": BERT, "electra": BERT,
    "gpt2": GPT2,
    "gemma3_text": GEMMA3,
    "t5": T5,
}
SUPPORTED: tuple[str, ...] = tuple(sorted(FAMILIES))


def family_of(model_type: str) -> Family:
    """The walker of ``model_type``; an ExplorerError naming the covered types for any other."""
    if model_type in FAMILIES:
        return FAMILIES[model_type]
    labels = ", ".join(f"{anatomy.CARDS[t].label} ({t})" for t in SUPPORTED)
    label = anatomy.CARDS[model_type].label if model_type in anatomy.CARDS else model_type
    raise ExplorerError(f"The forward pass is not stepped through for {label} yet: it covers {labels}. "
                        "Pick a model of one of these types.")
