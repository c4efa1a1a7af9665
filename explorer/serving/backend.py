"""One interface to a model, wherever it runs: in this process, or behind an inference engine.

A :class:`Backend` answers what the live pages and the CLI ask of a model: the next-token table, a text's
log-likelihood, step-by-step decoding (:meth:`Backend.start`, a :class:`Stepping` the page's Step button
continues), a whole generation, the live pages' tasks (a fill-mask column, span infilling, an answer, a
similarity matrix and a search), sentence embeddings, its own tokenization, and whether it can do each
(:meth:`Backend.why_not`, a reason in words, or None). A page builds one backend per model it shows and asks them
all the same way: it never asks "local or served?". ``ident`` is a stable hashable key (the same model in the
same place, asked the same way) that caches key on. Two implementations:

* :class:`LocalBackend`: a model in this process (:class:`~explorer.runtime.loading.LoadedModel`, loaded already
  or on first use: :func:`decoder` for a decoder, :func:`model` for any model), computed by the task modules
  (``explorer.tasks``);
* :class:`ServedBackend`: an endpoint of an OpenAI-compatible engine (:mod:`explorer.serving`), its capabilities
  read by the probe.

Both return the same result types (``NextToken``, ``Generation``, ``FillMaskResult``, ``InfillResult``, an answer,
``SimilarityResult``, ``SearchResult``, a ``(N, D)`` tensor, ``Tokenization``), so one page or command shows either,
and tests compare them on the same weights.

>>> from explorer.serving.endpoints import Endpoint
>>> down = served(Endpoint("nowhere", "http://127.0.0.1:9/v1"))  # nothing listens on port 9
>>> down.key, down.why_not("attention").split(":")[0]
('served:nowhere', 'no inference engine sends attention weights')
>>> from explorer.runtime.resolve import resolve
>>> here = decoder(resolve("gemma3-270m"), device="cpu")  # nothing is loaded until a result is asked
>>> here.ident[0], here.ident[1].spec, here.shown, here.in_process
('local', 'gemma3-270m', 'gemma3-270m', True)
>>> model(resolve("gemma3-270m"), device="cpu").ident == here.ident  # one key per model, whatever it is asked
True
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import torch

from explorer.core.errors import ExplorerError
from explorer.core.locks import lock_of
from explorer.runtime import modelkind
from explorer.runtime.loading import load_model
from explorer.runtime.offload import input_device
from explorer.serving import decoding as served_decoding
from explorer.serving import embedding as served_embedding
from explorer.serving import fillin, probe, scoring
from explorer.serving import tokenizer as served_tokenizer
from explorer.serving.endpoints import Endpoint
from explorer.tasks import fillmask, infill, qa, similarity
from explorer.tasks.causal.answer import GenerativeAnswer
from explorer.tasks.fillmask.result import FillMaskResult
from explorer.tasks.generation import run
from explorer.tasks.generation.nexttoken import NextToken, next_token
from explorer.tasks.generation.run import Generation, load_decoder
from explorer.tasks.generation.steps import Step
from explorer.tasks.generation.strategy import DecodingSettings
from explorer.tasks.infill import InfillResult
from explorer.tasks.similarity import SearchResult, SimilarityResult
from explorer.tokenization.split import Tokenization, assemble, check_text

if TYPE_CHECKING:
    from explorer.runtime.loading import LoadedModel
    from explorer.runtime.resolve import ModelRef

__all__ = ["CAPABILITIES", "INSIDES", "Answer", "Backend", "LocalBackend", "ServedBackend", "Stepping", "decoder",
           "local", "model", "served"]

# What a backend may be asked, and the probe's flag each needs on a server (``fill``: the fill-mask column; ``infill``:
# span infilling; ``answer``: QA; ``embed``: embeddings, similarity, search; ``insides``: layers, gradients).
CAPABILITIES = ("next_token", "score", "step", "fast", "fill", "infill", "answer", "embed", "tokenize", "attention",
                "insides")
INSIDES = ("a served model's insides (its layers and gradients) are not available: the engine sends only text and "
           "log-probabilities")
_SERVER_FLAG = {"next_token": "top_k", "step": "top_k", "fast": "top_k", "score": "prompt_logprobs",
                "fill": "prompt_logprobs", "infill": "prompt_logprobs", "answer": "top_k", "embed": "embeddings",
                "tokenize": "tokenizer"}
_RESOLVED = ("fill", "infill", "answer")  # a local model answers these from its ref (the task loads it its own way)
Answer = qa.QAResult | GenerativeAnswer


class _Decoder(Protocol):
    """A step-by-step decoder, here or fed by a server (``TokenDecoder``, ``BeamDecoder``, ``ClientDecoder``)."""

    @property
    def steps(self) -> Sequence[Step]: ...
    def run(self, until: int | None = None) -> object: ...


class Stepping:
    """A generation under way, one token at a time (the page's Step button continues it): :meth:`run` decodes up
    to ``until`` tokens (each step under the request's budget), :meth:`result` is the generation so far."""

    def __init__(self, decoder: _Decoder, result: Callable[[], Generation]) -> None:
        self.decoder, self._result = decoder, result

    @property
    def done(self) -> int:
        """Tokens decoded so far."""
        return len(self.decoder.steps)

    def run(self, until: int) -> None:
        self.decoder.run(until=until)

    def result(self) -> Generation:
        return self._result()


class Backend(Protocol):
    """What a model can be asked, in process or served (``key``: its results' model key; ``ident``: a stable
    hashable key for caches; ``shown``: its name on a page; ``in_process``: its work runs in this process and
    holds one of its model slots, :mod:`explorer.runtime.workers`, rather than waiting on a server)."""

    key: str
    ref: ModelRef | None  # the model resolved once, for a model in this process made from it; None when served

    @property
    def endpoint(self) -> Endpoint | None: ...  # the served model's endpoint; None in this process
    @property
    def placement(self) -> tuple[str | None, str | None]: ...  # (device, dtype) asked of a model here

    @property
    def ident(self) -> Hashable: ...
    @property
    def shown(self) -> str: ...
    @property
    def in_process(self) -> bool: ...
    def where(self) -> str: ...
    def why_not(self, capability: str) -> str | None: ...
    def next_token(self, text: str, top_k: int = 10) -> NextToken: ...
    def score(self, context: str, continuation: str) -> float: ...
    def start(self, text: str, settings: DecodingSettings) -> Stepping: ...
    def generate(self, text: str, settings: DecodingSettings, fast: bool = False) -> Generation: ...
    def fill(self, prompt: str, top_k: int = 5, answer_tokens: int = 1) -> FillMaskResult: ...
    def infill(self, prompt: str, max_new_tokens: int = 24) -> InfillResult: ...
    def answer(self, question: str, context: str, max_answer_len: int = 30) -> Answer: ...
    def similarity(self, lines: list[str] | str, batch_size: int = 32) -> SimilarityResult: ...
    def search(self, query: str, lines: list[str] | str) -> SearchResult: ...
    def embed(self, texts: list[str]) -> torch.Tensor: ...
    def tokenize(self, text: str) -> Tokenization: ...


def _refuse(backend: Backend, capability: str) -> None:
    why = backend.why_not(capability)
    if why is not None:
        raise ExplorerError(f"{backend.key} cannot do {capability.replace('_', '-')}: {why}")


class LocalBackend:
    """A model in this process: ``source`` is the loaded model, or a loader asked on each use (the loader's
    memory-bounded cache keeps it, so a backend a page holds never pins a model nor loads one for a cached
    answer). ``ref`` and ``placement`` (device, dtype): the model resolved once and where it runs, which the
    fill-in and QA tasks load from in their own way (a masked LM, a seq2seq model, a reader)."""

    in_process = True

    def __init__(self, source: LoadedModel | Callable[[], LoadedModel], key: str, ident: Hashable,
                 ref: ModelRef | None = None, placement: tuple[str | None, str | None] = (None, None)) -> None:
        self._source, self.key, self._ident, self.ref, self._placement = source, key, ident, ref, placement

    @property
    def ident(self) -> Hashable:
        return self._ident

    @property
    def shown(self) -> str:
        path = Path(self.key)  # a directory by its last part, never the whole path; a catalog key as it is
        return path.name if path.is_absolute() else self.key

    @property
    def endpoint(self) -> Endpoint | None:
        return None

    @property
    def placement(self) -> tuple[str | None, str | None]:
        return self._placement

    @property
    def loaded(self) -> LoadedModel:
        return self._source() if callable(self._source) else self._source

    @property
    def decoder(self) -> bool:
        return modelkind.config_family(self.loaded.model.config.to_dict()) == "decoder"

    def where(self) -> str:
        return f"in this process · {self.loaded.device_name} · {self.loaded.dtype}"

    def why_not(self, capability: str) -> str | None:
        if capability not in CAPABILITIES:
            return f"not something a model is asked here (one of {', '.join(CAPABILITIES)})"
        if capability == "fast":
            return "in this process every step is already computed here: the fast mode is a served model's"
        if capability in _RESOLVED:  # the task checks the model's kind itself, with its own message
            return None if self.ref is not None else "made from a loaded model: build it from the resolved model"
        if capability in ("next_token", "score", "step") and not self.decoder:
            return "it is not a decoder: pick one that predicts the next token (gemma3-270m)"
        if capability == "embed" and self.decoder:
            return "it is a decoder: sentence embeddings come from an encoder (all-MiniLM-L6-v2)"
        return None

    def next_token(self, text: str, top_k: int = 10) -> NextToken:
        _refuse(self, "next_token")
        return next_token(self.loaded, text, top_k)

    def score(self, context: str, continuation: str) -> float:
        """log p(continuation | context), tokens matched by character offset as on a server (a token straddling
        the boundary is the continuation's)."""
        _refuse(self, "score")
        scoring.check_pair(context, continuation)
        tok, text = self.loaded.tokenizer, context + continuation
        with lock_of(tok):
            enc = tok(text, return_offsets_mapping=True)
        ids, starts = list(enc["input_ids"]), [s for s, _ in enc["offset_mapping"]]
        per_token = [None] + _token_logprobs(self.loaded.model, ids)
        mine = scoring.continuation_logprobs(starts, per_token, len(context), len(text))
        if not mine or any(lp is None for lp in mine):
            raise ExplorerError("The text to score is a single token: give some context before the continuation.")
        return float(sum(lp for lp in mine if lp is not None))

    def start(self, text: str, settings: DecodingSettings) -> Stepping:
        _refuse(self, "step")
        loaded = self.loaded
        prompt, decoding = run.start(loaded, text, settings)
        return Stepping(decoding, lambda: run.result(loaded, prompt, decoding))

    def generate(self, text: str, settings: DecodingSettings, fast: bool = False) -> Generation:
        _refuse(self, "fast" if fast else "step")
        return run.generate(self.loaded, text, settings)

    def _resolved(self, capability: str) -> ModelRef:
        _refuse(self, capability)
        assert self.ref is not None  # why_not refused otherwise
        return self.ref

    def fill(self, prompt: str, top_k: int = 5, answer_tokens: int = 1) -> FillMaskResult:
        """Its top-k for every mask of ``prompt`` (a masked LM's, or a decoder's causal column); a model that cannot
        answer is in ``errors``, as on the page."""
        device, dtype = self._placement
        return fillmask.fill_mask((self._resolved("fill"),), prompt, top_k, answer_tokens=answer_tokens,
                                  device=device, dtype=dtype)

    def infill(self, prompt: str, max_new_tokens: int = 24) -> InfillResult:
        device, dtype = self._placement
        return infill.run(self._resolved("infill"), prompt, max_new_tokens, device=device, dtype=dtype)

    def answer(self, question: str, context: str, max_answer_len: int = 30) -> Answer:
        """A decoder's written answer, or a reader's span (``max_answer_len``: its longest span in tokens)."""
        device, dtype = self._placement
        return qa.ask(self._resolved("answer"), question, context, max_answer_len, device=device, dtype=dtype)

    def similarity(self, lines: list[str] | str, batch_size: int = 32) -> SimilarityResult:
        """The cosine matrix of the lines (``batch_size``: sentences per forward pass)."""
        _refuse(self, "embed")
        return similarity.similarity(self.loaded, lines, batch_size)

    def search(self, query: str, lines: list[str] | str) -> SearchResult:
        _refuse(self, "embed")
        return similarity.search(self.loaded, query, lines)

    def embed(self, texts: list[str]) -> torch.Tensor:
        _refuse(self, "embed")
        return similarity.encode(self.loaded, similarity.clean_sentences(texts).sentences)

    def tokenize(self, text: str) -> Tokenization:
        tok = self.loaded.tokenizer
        with lock_of(tok):
            enc = tok(check_text(text), return_offsets_mapping=True, return_special_tokens_mask=True)
        ids = [int(i) for i in enc["input_ids"]]
        pieces = [str(tok.decode([i])) for i in ids]
        limit = int(getattr(self.loaded.model.config, "max_position_embeddings", 0) or 512)
        return assemble(self.key, text, ids, tok.convert_ids_to_tokens(ids), list(enc["offset_mapping"]),
                        [bool(m) for m in enc["special_tokens_mask"]], limit, pieces=pieces,
                        unk_id=tok.unk_token_id)


def _token_logprobs(model: torch.nn.Module, ids: list[int]) -> list[float]:
    """log p(ids[t] | ids[:t]) for t >= 1, one forward (their sum is
    :func:`explorer.tasks.causal.scoring.sequence_logprob`)."""
    x = torch.tensor([ids], device=input_device(model))  # (1, T)
    with torch.inference_mode():
        lp = torch.log_softmax(model(input_ids=x).logits[0, :-1].float(), -1)  # (T-1, V)
    return lp.gather(1, x[0, 1:, None])[:, 0].tolist()


class ServedBackend:
    """An endpoint of an OpenAI-compatible engine; what it can do comes from its probe."""

    in_process = False
    ref: ModelRef | None = None  # a served model has no local ref

    def __init__(self, ep: Endpoint) -> None:
        self.ep, self.key = ep, ep.key

    @property
    def ident(self) -> Hashable:
        return ("served", self.ep)  # the frozen endpoint: a changed URL or model is another backend

    @property
    def shown(self) -> str:
        return f"{self.ep.shown} (served)"

    @property
    def endpoint(self) -> Endpoint | None:
        return self.ep

    @property
    def placement(self) -> tuple[str | None, str | None]:
        return None, None

    def where(self) -> str:
        return probe.served_on(self.ep, probe.capabilities(self.ep))["device_name"]

    def why_not(self, capability: str) -> str | None:
        if capability not in CAPABILITIES:
            return f"not something a model is asked here (one of {', '.join(CAPABILITIES)})"
        if capability == "attention":
            return ("no inference engine sends attention weights: the Attention maps page runs the model in this "
                    "process")
        if capability == "insides":
            return INSIDES
        caps = probe.capabilities(self.ep)
        if not caps.reachable:
            return caps.error
        flag = _SERVER_FLAG[capability]
        if getattr(caps, flag):
            return None
        return caps.why_not(flag) or "the server does not offer it"

    def next_token(self, text: str, top_k: int = 10) -> NextToken:
        return served_decoding.next_token(self.ep, text, top_k)

    def score(self, context: str, continuation: str) -> float:
        return scoring.score(self.ep, context, continuation)

    def start(self, text: str, settings: DecodingSettings) -> Stepping:
        caps, decoding, notices = served_decoding.start(self.ep, text, settings)
        return Stepping(decoding, lambda: served_decoding.result(self.ep, caps, text, decoding, notices))

    def generate(self, text: str, settings: DecodingSettings, fast: bool = False) -> Generation:
        return (served_decoding.fast if fast else served_decoding.generate)(self.ep, text, settings)

    def fill(self, prompt: str, top_k: int = 5, answer_tokens: int = 1) -> FillMaskResult:
        """The causal fill-mask column, each candidate's whole text scored by the server."""
        column = replace(fillin.fill_column(self.ep, prompt, top_k, answer_tokens), name=self.shown)
        return FillMaskResult(column.text, len(column.masks), (column,), ())

    def infill(self, prompt: str, max_new_tokens: int = 24) -> InfillResult:
        return fillin.infill_spans(self.ep, prompt, max_new_tokens)

    def answer(self, question: str, context: str, max_answer_len: int = 30) -> Answer:
        """The served decoder's written answer (``max_answer_len`` is an extractive reader's: not used here)."""
        return fillin.ask(self.ep, question, context)

    def similarity(self, lines: list[str] | str, batch_size: int = served_embedding.BATCH) -> SimilarityResult:
        """The cosine matrix of the lines (``batch_size``: texts per request, where the server batches right)."""
        return served_embedding.similarity(self.ep, lines, batch_size)

    def search(self, query: str, lines: list[str] | str) -> SearchResult:
        return served_embedding.search(self.ep, query, lines)

    def embed(self, texts: list[str]) -> torch.Tensor:
        return served_embedding.embed(self.ep, similarity.clean_sentences(texts).sentences)

    def tokenize(self, text: str) -> Tokenization:
        return self.tokens(text).tokenization

    def tokens(self, text: str) -> served_tokenizer.ServedTokens:
        """The server's tokenization with its total count and notices (a long text is shown in part)."""
        _refuse(self, "tokenize")
        return served_tokenizer.tokenize(self.ep, text, probe.capabilities(self.ep).tokenizer)


def model(ref: ModelRef, *, device: str | None = None, dtype: str | None = None) -> LocalBackend:
    """The backend of any model ``ref`` names (a masked LM, a seq2seq model, a reader, a bi-encoder or a decoder),
    loaded here on first use (:func:`~explorer.runtime.loading.load_model`; the fill-in and QA tasks load it their
    own way): a page builds it on every run at no cost. Same key as :func:`decoder` for the same model."""
    return LocalBackend(lambda: load_model(ref, device=device, dtype=dtype), ref.spec, ("local", ref, device, dtype),
                        ref, (device, dtype))


def local(loaded: LoadedModel) -> LocalBackend:
    """The backend of a model loaded in this process."""
    return LocalBackend(loaded, loaded.key, ("local", loaded.key, loaded.path, loaded.device, loaded.dtype))


def decoder(ref: ModelRef, *, device: str | None = None, dtype: str | None = None,
            purpose: str = "the Decoding lab") -> LocalBackend:
    """The backend of the decoder ``ref`` names, loaded here on first use
    (:func:`~explorer.tasks.generation.run.load_decoder`, with the same arguments): a page builds it on every run
    at no cost. Keyed by the ref, whose stamp changes with the weights on disk."""
    return LocalBackend(lambda: load_decoder(ref, purpose=purpose, device=device, dtype=dtype), ref.spec,
                        ("local", ref, device, dtype), ref, (device, dtype))


def served(ep: Endpoint) -> ServedBackend:
    """The backend of a served endpoint (nothing is asked of the server until a capability or result is)."""
    return ServedBackend(ep)
