"""Which family file walks which model type (one line each; a family not here is refused in words).

Every model type with an anatomy card has one:

>>> family_of("gpt2") is GPT2, sorted(SUPPORTED) == sorted(anatomy.CARDS)
(True, True)
"""

from __future__ import annotations

from explorer.architecture import anatomy
from explorer.core.errors import ExplorerError
from explorer.internals.forward.albert import ALBERT
from explorer.internals.forward.bart import BART
from explorer.internals.forward.bert import BERT
from explorer.internals.forward.bert2bert import BERT2BERT
from explorer.internals.forward.big_bird import BIG_BIRD
from explorer.internals.forward.bigbird_pegasus import BIGBIRD_PEGASUS
from explorer.internals.forward.ctrl import CTRL
from explorer.internals.forward.deberta import DEBERTA, DEBERTA_V2
from explorer.internals.forward.distilbert import DISTILBERT
from explorer.internals.forward.family import Family
from explorer.internals.forward.gemma3 import GEMMA3
from explorer.internals.forward.gpt2 import GPT2
from explorer.internals.forward.gpt_neo import GPT_NEO
from explorer.internals.forward.gptj import GPTJ
from explorer.internals.forward.longformer import LONGFORMER
from explorer.internals.forward.m2m_100 import M2M_100
from explorer.internals.forward.mobilebert import MOBILEBERT
from explorer.internals.forward.openai import OPENAI_GPT
from explorer.internals.forward.t5 import T5
from explorer.internals.forward.xlm import XLM

__all__ = ["FAMILIES", "SUPPORTED", "family_of"]

FAMILIES: dict[str, Family] = {
    "bert": BERT, "roberta": BERT, "xlm-roberta": BERT, "electra": BERT,
    "albert": ALBERT,
    "distilbert": DISTILBERT,
    "big_bird": BIG_BIRD,
    "longformer": LONGFORMER,
    "deberta": DEBERTA, "deberta-v2": DEBERTA_V2,
    "mobilebert": MOBILEBERT,
    "xlm": XLM,
    "openai-gpt": OPENAI_GPT,
    "gpt2": GPT2,
    "gpt_neo": GPT_NEO,
    "gptj": GPTJ,
    "ctrl": CTRL,
    "gemma3_text": GEMMA3,
    "t5": T5,
    "bart": BART,
    "m2m_100": M2M_100,
    "bigbird_pegasus": BIGBIRD_PEGASUS,
    "encoder-decoder": BERT2BERT,
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
