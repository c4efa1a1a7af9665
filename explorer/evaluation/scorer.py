"""The scorer for a model, by its family: one rule for the page, the CLI and the benchmarks.

A decoder scores a continuation by its log-likelihood (:mod:`~explorer.evaluation.decoder`), an encoder-decoder
as its output (:mod:`~explorer.evaluation.seq2seq`), a masked LM by pseudo-log-likelihood
(:mod:`~explorer.evaluation.masked`), a served model through its engine (:mod:`~explorer.evaluation.served`). An
encoder without a language-model head (a sentence encoder such as all-MiniLM-L6-v2) cannot score a text, and is
refused in words before any weight is read.
"""

from __future__ import annotations

from explorer.evaluation.decoder import DecoderScorer
from explorer.evaluation.masked import MaskedScorer
from explorer.evaluation.score import Scorer
from explorer.evaluation.seq2seq import Seq2SeqScorer
from explorer.evaluation.served import served_scorer
from explorer.runtime import modelkind
from explorer.runtime.loading import LoadedModel, load_model
from explorer.runtime.resolve import ModelRef
from explorer.serving.endpoints import Endpoint

__all__ = ["PURPOSE", "load_task", "local_scorer", "scorer_for"]

PURPOSE = "scoring a task"


def load_task(ref: ModelRef) -> str:
    """The loading task of a model that scores text: causal-lm, seq2seq or masked-lm, by its family."""
    return ref.head_task()


def local_scorer(loaded: LoadedModel) -> Scorer:
    """The scorer of a model loaded already (its head decides: causal LM, seq2seq, or masked LM)."""
    family = modelkind.config_family(loaded.model.config.to_dict())
    if family == "encoder-decoder":
        return Seq2SeqScorer(loaded)
    return DecoderScorer(loaded) if family == "decoder" else MaskedScorer(loaded)


def scorer_for(model: ModelRef | Endpoint, *, device: str | None = None, dtype: str | None = None) -> Scorer:
    """The scorer of a model the caller resolved (:func:`explorer.runtime.resolve.resolve`, loaded here on
    ``device``/``dtype``) or of a served endpoint."""
    if isinstance(model, Endpoint):
        return served_scorer(model)
    loaded = load_model(model, load_task(model), device=device, dtype=dtype, purpose=PURPOSE)
    return local_scorer(loaded)
