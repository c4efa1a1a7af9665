"""What each lab objective trains: the catalog variant it scales down, the strategies that corrupt its input.

A recipe names a variant from the catalog (its config is the starting point), the strategy of
:mod:`explorer.objectives` that draws its corruption (the same function the Objectives page
draws, so what a learner sees is what the model trains on), an optional sentence-level strategy
(NSP, SOP) and the loss family in :mod:`explorer.training.losses`. Sizes are the Architecture
explorer's own overrides (:func:`explorer.architecture.build.apply_overrides`).

>>> get("mlm").strategy, get("albert").sentence
('bert', 'sop')
>>> overrides("albert", "tiny")["embedding_size"]
64
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.errors import ExplorerError, shorten

__all__ = ["ALIASES", "RECIPES", "SIZES", "Recipe", "get", "overrides"]


@dataclass(frozen=True)
class Recipe:
    """One objective of the lab.

    ``loss``: the family in :mod:`explorer.training.losses` ("mlm", "electra", "spanbert",
    "seq2seq", "causal", "distill"). ``dynamic``: a fresh corruption every epoch (RoBERTa);
    otherwise the first draw is kept for every epoch (BERT's static masking).
    """

    name: str
    label: str
    variant: str
    head: str
    strategy: str
    loss: str
    sentence: str | None = None
    dynamic: bool = False
    claim: str = ""

    def to_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in ("name", "label", "variant", "head", "strategy", "loss", "sentence",
                                              "dynamic")}


RECIPES: dict[str, Recipe] = {r.name: r for r in (
    Recipe("mlm", "BERT MLM (static, no NSP)", "bert-base", "mlm", "bert", "mlm",
           claim="The masked-LM baseline every other encoder is measured against."),
    Recipe("bert", "BERT MLM + NSP", "bert-base", "pretraining", "bert", "mlm", sentence="nsp",
           claim="BERT: MLM plus next-sentence prediction."),
    Recipe("roberta", "RoBERTa (dynamic MLM, no NSP)", "roberta-base", "mlm", "roberta", "mlm", dynamic=True,
           claim="RoBERTa: dynamic masking and dropping NSP help."),
    Recipe("albert", "ALBERT (factorized embeddings, shared layers, SOP)", "albert-base", "pretraining", "bert", "mlm",
           sentence="sop", claim="ALBERT: far fewer parameters for a small cost in quality."),
    Recipe("electra", "ELECTRA (generator + discriminator, RTD x 50)", "electra-small", "electra-pair", "electra",
           "electra", claim="ELECTRA: replaced-token detection learns more per unit of compute than MLM."),
    Recipe("spanbert", "SpanBERT (span masking + SBO)", "spanbert", "spanbert", "spanbert", "spanbert",
           claim="SpanBERT: span masking and the boundary objective help span tasks."),
    Recipe("t5", "T5 span corruption", "t5-small", "seq2seq", "t5", "seq2seq",
           claim="T5: span corruption with sentinels, a short target."),
    Recipe("bart", "BART text infilling", "bart-base", "seq2seq", "bart-infill", "seq2seq",
           claim="BART: infilling teaches the decoder to rewrite the whole text."),
    Recipe("gpt", "GPT causal LM", "gpt2", "causal-lm", "gpt-clm", "causal",
           claim="GPT: every token is a training signal, but only left context."),
    Recipe("distilbert", "DistilBERT (student of a trained teacher, triple loss)", "distilbert", "mlm", "bert",
           "distill", claim="DistilBERT keeps most of its teacher with 40% fewer parameters."),
)}
ALIASES = {"bert-mlm": "mlm", "gpt2": "gpt", "clm": "gpt", "sbo": "spanbert", "distil": "distilbert"}

# The Architecture explorer's knobs, scaled down; ALBERT's embedding is half the width as in the paper's ratio.
SIZES: dict[str, dict[str, int]] = {
    "tiny": {"num_hidden_layers": 2, "hidden_size": 128, "num_attention_heads": 2, "intermediate_size": 512},
    "small": {"num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4, "intermediate_size": 1024},
}


def get(name: str) -> Recipe:
    """The recipe called ``name`` (or an alias); an unknown name lists the valid ones."""
    key = ALIASES.get(str(name).strip().lower(), str(name).strip().lower())
    if key not in RECIPES:
        raise ExplorerError(f"Unknown objective {shorten(name)!r}. Choose one of: {', '.join(RECIPES)}.")
    return RECIPES[key]


def overrides(name: str, size: str, vocab_size: int = 8192) -> dict[str, int]:
    """The generic knob overrides that scale ``name``'s variant down to ``size``."""
    if size not in SIZES:
        raise ExplorerError(f"Unknown size {shorten(size)!r}. Choose one of: {', '.join(SIZES)}.")
    out = {**SIZES[size], "vocab_size": vocab_size}
    if get(name).name == "albert":
        out["embedding_size"] = SIZES[size]["hidden_size"] // 2
    return out
