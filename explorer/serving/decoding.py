"""Decoding a served model from the client: the next-token table, and every strategy one token at a time.

An engine sends, per position, the top-k tokens as *text* with their log-probabilities (before temperature), not
the whole distribution and not token ids. So the client decodes from an **oracle**: a function from prefixes
(tuples of token texts) to each prefix's top-k ``(token, log-probability)``, best first, asked with one
``max_tokens=1`` request per prefix (the prompt plus the tokens so far, as text: the engine re-tokenises it,
and keeps its KV cache for the common prefix). Every step's alternatives therefore show, as in the local lab.

* greedy takes the best; sample / top-k / top-p apply the temperature and filters to the k the server sent and
  draw with a seeded ``random.Random`` (reproducible, unlike a server's seed after a prefix-cache hit), and say
  how much of the probability those k held;
* beam search is the local :class:`~explorer.tasks.generation.beam.BeamDecoder` with transformers' rules, fed by
  the oracle: its K = 2B best continuations over all beams are always among each beam's own 2B best, so with
  each beam's top-2B the search is the same as on the whole distribution (tests check it against the local
  decoder on the same weights, with an oracle made from the local model);
* a "fast" mode asks the server for the whole continuation with per-token alternatives in one request.

Token ids are this decoder's own numbering of the token texts it has seen (an engine sends texts), so repeated
tokens get the same id and the repetition curve still counts them.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Hashable, Sequence

import torch

from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import SERVED_PROMPT_CHARS
from explorer.core.notices import Notice
from explorer.runtime import cancel
from explorer.serving import client
from explorer.serving.client import Completion
from explorer.serving.endpoints import Endpoint
from explorer.serving.probe import Capabilities, neutral, require, served_on
from explorer.tasks.generation.beam import BeamDecoder
from explorer.tasks.generation.nexttoken import MAX_TABLE, Candidate, NextToken
from explorer.tasks.generation.run import Generation
from explorer.tasks.generation.steps import Alternative, Step
from explorer.tasks.generation.strategy import TOP_ALTERNATIVES, DecodingSettings

__all__ = ["END_TEXTS", "ClientDecoder", "Oracle", "OracleBeamDecoder", "fast", "generate",
           "next_token", "served_oracle", "start"]

Token = Hashable
Oracle = Callable[[list[tuple[Token, ...]]], list[list[tuple[Token, float]]]]
# Texts engines give end-of-sequence tokens (llama-cpp-python renders control tokens as ""): the end of a text.
END_TEXTS = frozenset({"", "<eos>", "</s>", "<|endoftext|>", "<|im_end|>", "<end_of_turn>", "<|eot_id|>"})


def check_prompt(text: object) -> str:
    """The prompt, or one ExplorerError before any request (empty, not text, or past :data:`SERVED_PROMPT_CHARS`)."""
    if not isinstance(text, str) or not text.strip():
        raise ExplorerError("Type a prompt: the served model continues it.")
    if len(text) > SERVED_PROMPT_CHARS:
        raise ExplorerError(f"The prompt has {len(text):,} characters; a served model takes {SERVED_PROMPT_CHARS:,} at "
                            "most from this explorer (its context is the engine's): shorten it.")
    if "\x00" in text:
        raise ExplorerError("The prompt holds a NUL character, which no engine reads: remove it.")
    return text


def _k(caps: Capabilities, wanted: int) -> tuple[int, tuple[Notice, ...]]:
    """The k to ask (at most the server's cap) and a notice when the cap cut it."""
    if wanted <= caps.max_k:
        return wanted, ()
    return caps.max_k, (Notice("truncated", f"The server sends at most {caps.max_k} alternatives per token "
                                            f"(asked for {wanted}): the table shows {caps.max_k}."),)


def _top(out: Completion, k: int) -> list[tuple[str, float]]:
    """The first position's top-k, best first (an engine may add the chosen token as a (k+1)-th)."""
    if not out.top_logprobs or not out.top_logprobs[0]:
        raise client.ServedError("The server answered without per-token alternatives (logprobs).", "garbage")
    return list(out.top_logprobs[0][:k])


def next_token(ep: Endpoint, text: str, top_k: int = 10, key: str | None = None) -> NextToken:
    """The served model's top-k next tokens after ``text``: one ``max_tokens=1`` request."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TABLE:
        raise ExplorerError(f"top-k must be a whole number from 1 to {MAX_TABLE} (got {shorten(top_k)!r}).")
    text = check_prompt(text)
    caps = require(ep, "top_k", "a next-token table")
    k, notices = _k(caps, top_k)
    out = client.complete(ep, text, max_tokens=1, logprobs=k, temperature=0.0, extra=neutral(caps))
    candidates = tuple(Candidate(t, -1, lp, math.exp(lp)) for t, lp in _top(out, k))
    mass = sum(c.probability for c in candidates)
    notices += (Notice("info", f"Served by {caps.engine}: the server's own log-probabilities (before any temperature) "
                               f"of its top {len(candidates)} tokens, holding {mass:.1%} of the probability; it sends "
                               "neither token ids nor the rest of the vocabulary."),)
    return NextToken(key or ep.key, 0, False, out.prompt_tokens or 0, candidates, notices, **served_on(ep, caps))


def served_oracle(ep: Endpoint, prompt: str, k: int, extra: dict[str, object] | None = None) -> Oracle:
    """An oracle asking ``ep`` for each prefix's top-``k`` next tokens (prefixes sent as prompt + text), the
    prefixes of one step in parallel (bounded by the endpoint's own limit). ``extra``: the engine's fields
    (:func:`~explorer.serving.probe.neutral`)."""

    def one(prefix: tuple[Token, ...]) -> list[tuple[Token, float]]:
        out = client.complete(ep, prompt + "".join(map(str, prefix)), max_tokens=1, logprobs=k, temperature=0.0,
                              extra=extra)
        return list(_top(out, k))

    def ask(prefixes: list[tuple[Token, ...]]) -> list[list[tuple[Token, float]]]:
        unique = list(dict.fromkeys(prefixes))
        found = dict(zip(unique, client.parallel(ep, one, unique), strict=True))
        return [found[p] for p in prefixes]

    return ask


class _Vocabulary:
    """Token texts (or ids) <-> this decoder's own ids; the end tokens first."""

    def __init__(self, ends: Sequence[Token], texts: Callable[[Token], str]) -> None:
        self.tokens: list[Token] = []
        self.ids: dict[Token, int] = {}
        self.texts = texts
        for token in ends:
            self.id(token)

    def id(self, token: Token) -> int:
        if token not in self.ids:
            self.ids[token] = len(self.tokens)
            self.tokens.append(token)
        return self.ids[token]

    def alternatives(self, top: list[tuple[Token, float]]) -> tuple[Alternative, ...]:
        return tuple(Alternative(self.texts(t), self.id(t), math.exp(lp)) for t, lp in top[:TOP_ALTERNATIVES])


def _choose(top: list[tuple[Token, float]], settings: DecodingSettings, rng: random.Random) -> tuple[Token, float]:
    """The token a strategy picks from the server's top list (temperature and filters applied here)."""
    if settings.effective_strategy == "greedy":
        return top[0]
    kept = top[:settings.top_k] if settings.strategy == "top-k" else top
    scaled = [lp / settings.temperature for _, lp in kept]
    peak = max(scaled)
    weights = [math.exp(s - peak) for s in scaled]
    total = sum(weights)
    probs = [w / total for w in weights]
    if settings.strategy == "top-p":  # the smallest set holding top_p of the (renormalised) mass, best first
        acc, cut = 0.0, len(probs)
        for i, p in enumerate(probs):
            acc += p
            if acc >= settings.top_p:
                cut = i + 1
                break
        probs = [p / sum(probs[:cut]) for p in probs[:cut]]
    draw, acc = rng.random(), 0.0
    for (token, lp), p in zip(kept, probs, strict=False):
        acc += p
        if draw < acc:
            return token, lp
    return kept[len(probs) - 1]


class ClientDecoder:
    """Greedy, sample, top-k or top-p from an oracle, one token per :meth:`step` (the page's Step button)."""

    def __init__(self, oracle: Oracle, settings: DecodingSettings, ends: Sequence[Token] = tuple(END_TEXTS),
                 texts: Callable[[Token], str] = str) -> None:
        self.oracle, self.settings = oracle, settings
        self.vocab = _Vocabulary(tuple(ends), texts)
        self._ends = set(ends)
        self._rng = random.Random(settings.seed)
        self._prefix: tuple[Token, ...] = ()
        self.steps: list[Step] = []
        self.mass: list[float] = []  # probability the server's list held at each step
        self.finished = False

    def step(self) -> Step | None:
        if self.finished:
            return None
        cancel.check()
        top = self.oracle([self._prefix])[0]
        if not top:
            raise client.ServedError("The server sent no alternatives for the next token.", "garbage")
        token, lp = _choose(top, self.settings, self._rng)
        self.mass.append(sum(math.exp(p) for _, p in top))
        step = Step(self.vocab.texts(token), self.vocab.id(token), math.exp(lp), self.vocab.alternatives(top))
        self.steps.append(step)
        self._prefix += (token,)
        self.finished = token in self._ends or len(self.steps) >= self.settings.max_new_tokens
        return step

    def run(self, until: int | None = None) -> list[Step]:
        target = self.settings.max_new_tokens if until is None else min(until, self.settings.max_new_tokens)
        while not self.finished and len(self.steps) < target:
            self.step()
        return self.steps

    def tokens(self) -> list[Token]:
        """The chosen tokens as the oracle names them (texts for a server, ids for a local oracle)."""
        return [self.vocab.tokens[s.token_id] for s in self.steps]


class OracleBeamDecoder(BeamDecoder):
    """:class:`BeamDecoder`'s rules on an oracle's top-2B lists: each step asks for every running beam's prefix."""

    def __init__(self, oracle: Oracle, settings: DecodingSettings, ends: Sequence[Token] = tuple(END_TEXTS),
                 texts: Callable[[Token], str] = str, per_beam: int = 2) -> None:
        self.oracle, self.vocab = oracle, _Vocabulary(tuple(ends), texts)
        settings = settings.validated()
        # transformers keeps K = max(2, 1 + #end tokens) x B candidates; a server's end tokens are unknown texts, so
        # they count as one kind (K = 2B) unless the caller knows them (a local oracle passes the model's ids)
        self._start(settings, [self.vocab.id(t) for t in ends], per_beam, 0)
        self._prefixes: list[tuple[Token, ...]] = [() for _ in range(self.beams)]

    def _log_probs(self) -> torch.Tensor:
        """(B, V) log-probabilities: each beam's top list from the oracle, -inf elsewhere (V: texts seen so far).
        Only live beams are asked: on the first step all beams share the empty prefix, so one request."""
        live = [b for b in range(self.beams) if float(self._running_scores[0, b]) > -1.0e8]  # beams begin dead at -1e9
        answers = dict(zip(live, self.oracle([self._prefixes[b] for b in live]), strict=True))
        cells = [(b, self.vocab.id(t), lp) for b, top in answers.items() for t, lp in top]
        out = torch.full((self.beams, len(self.vocab.tokens)), -math.inf)
        for b, i, lp in cells:
            out[b, i] = lp
        return out

    def _continue(self, source: torch.Tensor, tokens: torch.Tensor) -> None:
        self._prefixes = [self._prefixes[s] + (self.vocab.tokens[t],)
                          for s, t in zip(source.tolist(), tokens.tolist(), strict=True)]

    def _text(self, token_id: int) -> str:
        return self.vocab.texts(self.vocab.tokens[token_id])

    def tokens(self) -> list[Token]:
        return [self.vocab.tokens[s.token_id] for s in self.steps]


Decoder = ClientDecoder | OracleBeamDecoder


def start(ep: Endpoint, text: str, settings: DecodingSettings) -> tuple[Capabilities, Decoder, tuple[Notice, ...]]:
    """The step-by-step decoder of a served model for these settings (nothing asked of the server yet but its
    capabilities)."""
    text, settings = check_prompt(text), settings.validated()  # the CPU's cap: a round trip a step
    caps = require(ep, "top_k", "step-by-step decoding")
    notices: list[Notice] = []
    if settings.effective_strategy == "beam":
        k = 2 * settings.beams
        if k > caps.max_k:
            raise ExplorerError(f"Beam search with {settings.beams} beams needs each beam's best {k} tokens; "
                                f"{ep.shown} sends at most {caps.max_k}: use at most {caps.max_k // 2} beams.")
        return caps, OracleBeamDecoder(served_oracle(ep, text, k, neutral(caps)), settings), ()
    k = caps.max_k if settings.effective_strategy != "greedy" else min(caps.max_k, TOP_ALTERNATIVES)
    if settings.effective_strategy != "greedy":
        cut = f" (k = {settings.top_k} asked; the server sends {k})" if settings.strategy == "top-k" and \
            settings.top_k > k else ""
        notices.append(Notice("info", f"Sampled here, from the {k} most likely tokens the server sends per step{cut}: "
                                      "the rest of the vocabulary is out of reach; the draw is seeded on the client."))
    return caps, ClientDecoder(served_oracle(ep, text, k, neutral(caps)), settings), tuple(notices)


def result(ep: Endpoint, caps: Capabilities, text: str, decoder: Decoder, notices: tuple[Notice, ...] = (),
           seconds: float = 0.0, key: str | None = None) -> Generation:
    """The generation so far of a (possibly unfinished) served decoder."""
    steps = tuple(decoder.steps)
    body = "".join(s.token for s in steps if s.token not in END_TEXTS)
    extra: tuple[Notice, ...] = ()
    if isinstance(decoder, ClientDecoder) and decoder.mass and decoder.settings.effective_strategy != "greedy":
        extra = (Notice("info", f"The server's top tokens held {min(decoder.mass):.1%} to {max(decoder.mass):.1%} of "
                                "the probability at each step."),)
    return Generation(key or ep.key, decoder.settings, text, body, steps, decoder.finished, seconds,
                      notices + extra, **served_on(ep, caps))


def generate(ep: Endpoint, text: str, settings: DecodingSettings, key: str | None = None) -> Generation:
    """Decode to the end from the client, one request per step (per beam for beam search)."""
    caps, decoder, notices = start(ep, text, settings)
    began = time.perf_counter()
    decoder.run()
    return result(ep, caps, text, decoder, notices, time.perf_counter() - began, key)


def fast(ep: Endpoint, text: str, settings: DecodingSettings, key: str | None = None) -> Generation:
    """The whole continuation in one request, with the top alternatives of every token (no beam search:
    OpenAI-compatible engines do not offer it through completions)."""
    text, settings = check_prompt(text), settings.validated()  # the CPU's cap: a round trip a step
    if settings.effective_strategy == "beam":
        raise ExplorerError("Beam search is not in one server request: run it step by step (each step asks for "
                            "every beam's best tokens).")
    caps = require(ep, "top_k", "a generation with alternatives")
    greedy = settings.effective_strategy == "greedy"
    extra = neutral(caps, **({"top_k": settings.top_k} if settings.strategy == "top-k" and not greedy else {}),
                    **({"top_p": settings.top_p} if settings.strategy == "top-p" and not greedy else {}))
    began = time.perf_counter()
    out = client.complete(ep, text, max_tokens=settings.max_new_tokens, logprobs=min(TOP_ALTERNATIVES, caps.max_k),
                          temperature=0.0 if greedy else settings.temperature, seed=None if greedy else settings.seed,
                          extra=extra)
    vocab = _Vocabulary(tuple(END_TEXTS), str)
    steps = []
    for token, own, top in zip(out.tokens, out.token_logprobs, out.top_logprobs, strict=False):
        lp = own if own is not None else dict(top).get(token, -math.inf)
        steps.append(Step(token, vocab.id(token), math.exp(lp), vocab.alternatives(list(top))))
    notices = (Notice("info", "One request for the whole continuation: the server chose every token (its own "
                              "sampler and seed) and sent the alternatives."),)
    finished = out.finish_reason in ("stop", "length", "eos") or len(steps) >= settings.max_new_tokens
    return Generation(key or ep.key, settings, text, out.text, tuple(steps), finished,
                      time.perf_counter() - began, notices, **served_on(ep, caps))

