"""The scorer for a model, by its family: one rule for the page, the CLI and the benchmarks.

A decoder scores a continuation by its log-likelihood (:mod:`~explorer.evaluation.decoder`), an encoder-decoder
as its output (:mod:`~explorer.evaluation.seq2seq`), a masked LM by pseudo-log-likelihood
(:mod:`~explorer.evaluation.masked`), a served model through its engine (:mod:`~explorer.evaluation.served`). An
encoder without a language-model head (a sentence encoder such as all-MiniLM-L6-v2) cannot score a text, and is
refused in words before any weight is read.
"""

from __future__ import annotations

from explorer.core.errors import ExplorerError
from explorer.evaluation.decoder import DecoderScorer
from explorer.evaluation.masked import MaskedScorer
from explorer.evaluation.score import Scorer
from explorer.evaluation.seq2seq import Seq2SeqScorer
from explorer.evaluation.served import served_scorer
from explorer.runtime import modelkind
from explorer.runtime.loading import LoadedModel, load_model
from explorer.runtime.resolve import ModelRef
from explorer.serving.backend import Backend
from explorer.serving.endpoints import Endpoint

__all__ = ["LOCAL_PART", "PURPOSE", "SERVED_PART", "load_task", "local_scorer", "part_size", "scorer_for",
           "scorer_of"]

PURPOSE = "scoring a task"
LOCAL_PART = 8  # examples a page scores per request of a model here (a few seconds of Gemma 3 270M on 2 cores)
SERVED_PART = 2  # a served model's: one request per choice, ~0.6 s a token on a CPU engine


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


def scorer_of(model: Backend) -> Scorer:
    """The scorer of a backend, here (on the device and dtype it was asked for) or served: the page's one door."""
    device, dtype = model.placement
    where = model.endpoint or model.ref
    if where is None:
        raise ExplorerError(f"{model.shown} was not resolved here: build its backend from the resolved model.")
    return scorer_for(where, device=device, dtype=dtype)


def part_size(model: Backend) -> int:
    """Examples a page scores per request of ``model``: fewer where each choice is a request to a server."""
    return LOCAL_PART if model.endpoint is None else SERVED_PART
