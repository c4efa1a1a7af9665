"""What a served endpoint can do, asked of the server itself when it is first used.

A 200 answer does not mean a field was honoured (llama.cpp's ``llama-server`` answers ``echo`` with 200 and
ignores it), so every capability is checked on what comes back:

* ``top_k``: a one-token completion with ``logprobs=5`` returns several alternatives;
* ``prompt_logprobs``: ``echo`` with ``logprobs`` returns a log-probability for the prompt's own tokens, so a whole
  text can be scored (fill-in and QA rank candidates this way);
* ``max_k``: the largest ``logprobs`` the server takes (vLLM refuses more than ``--max-logprobs``, 20 by default),
  read off its own refusal;
* ``embeddings``: ``/v1/embeddings`` returns a vector;
* ``tokenizer``: which engine's tokenize route gives the server's own token ids (no OpenAI route does);
* the engine's name and version, and the model it serves.

What a server lacks is given with its reason, so pages grey it out and say why.
"""

from __future__ import annotations

import contextvars
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from explorer.core.errors import shorten
from explorer.serving import answers, client
from explorer.serving.client import ServedError
from explorer.serving.endpoints import Endpoint
from explorer.serving.errors import excerpt
from explorer.serving.tokenizer import find_style

if TYPE_CHECKING:  # placement imports torch, which the command line's light commands never load
    from explorer.runtime.placement import RanOn

__all__ = ["Capabilities", "PROBE_TEXT", "capabilities", "capabilities_many", "forget", "neutral", "probe", "require",
           "served_on", "summary"]

PROBE_TEXT = "The capital of France is"
WANTED_K = 20  # the most alternatives a page asks for per step (the table's 30 rows are cut to it where refused)
PROBE_SECONDS = 20.0  # all of a probe's requests together: a probe never waits a page's whole budget
REPROBE_AFTER = 300.0  # seconds a probe is trusted (a restarted server may come back with other flags)
MAX_CACHED = 256  # probes kept (endpoints typed on private machines add theirs)


@dataclass(frozen=True)
class Capabilities:
    """What ``endpoint`` answered when probed; ``missing`` holds a reason per capability it lacks."""

    endpoint: str
    reachable: bool
    engine: str = "unknown"  # "vLLM", "llama-cpp-python", "llama.cpp", "TGI", "Ollama", "SGLang" or "unknown"
    version: str = ""
    model: str = ""  # the model actually served (the configured one, or the only one listed)
    served_models: tuple[str, ...] = ()
    top_k: bool = False
    prompt_logprobs: bool = False
    max_k: int = 0  # largest logprobs it takes (0: none)
    embeddings: bool = False
    dimensions: int = 0  # embedding size, when embeddings work
    tokenizer: str = ""  # the tokenize routes it answers (a style of explorer.serving.tokenizer.STYLES), "" none
    error: str = ""  # why it is not reachable
    missing: tuple[tuple[str, str], ...] = ()  # (capability, why)
    seconds: float = 0.0
    complete: bool = True  # False: the probe's time ran out before every answer came (what is missing is unknown)

    def why_not(self, capability: str) -> str | None:
        """The reason ``capability`` is missing, or None when the server has it."""
        if not self.reachable:
            return self.error
        return dict(self.missing).get(capability)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["missing"] = dict(self.missing)
        return out


class _Clock:
    """The probe's one deadline: :data:`PROBE_SECONDS`, or the endpoint's own timeout when shorter, for all of its
    requests together (a server that answers each one slowly cannot hold a page for several timeouts)."""

    def __init__(self, ep: Endpoint) -> None:
        self.seconds = min(PROBE_SECONDS, ep.timeout)
        self.began = time.monotonic()
        self.ran_out = False

    def spent(self) -> bool:
        """Whether the deadline was reached: a request cut by it says nothing about what the server can do."""
        return self.ran_out or time.monotonic() - self.began >= self.seconds - 0.05

    def left(self, at_most: float | None = None) -> float:
        """Seconds left for the next request (raises a ServedError "timeout" once none are)."""
        left = self.seconds - (time.monotonic() - self.began)
        if left <= 0.05:
            self.ran_out = True
            raise ServedError(f"the probe ran out of its {self.seconds:.0f} s before asking", "timeout")
        return left if at_most is None else min(at_most, left)


def _engine(ep: Endpoint, listed: list[answers.Listed], clock: _Clock) -> tuple[str, str]:
    """(engine, version) from what the server says about itself; never fails."""
    owners = {(m.owned_by or "").lower() for m in listed}
    if "vllm" in owners:
        try:
            said = client.call(ep, "GET", "/version", root=True, timeout=clock.left(5))
            return "vLLM", excerpt(answers.read(ep, answers.Version, said, "/version").version, 40)
        except ServedError:
            return "vLLM", ""
    named = next((engine for owner, engine in _OWNERS.items() if owner in owners), None)
    if named is not None:
        return named, ""
    try:
        said = client.call(ep, "GET", "/openapi.json", root=True, timeout=clock.left(5))
        info = answers.read(ep, answers.OpenAPI, said, "/openapi.json").info
    except ServedError:
        info = answers.Info()
    title, version = excerpt(info.title, 40), excerpt(info.version, 40)
    if "llama" in title.lower():
        return "llama-cpp-python", version
    if "text generation inference" in title.lower():
        return "TGI", version
    return ("unknown", "") if not title else (title, version)


_OWNERS = {"llamacpp": "llama.cpp", "sglang": "SGLang", "library": "Ollama", "ollama": "Ollama"}


def _max_k(ep: Endpoint, clock: _Clock) -> tuple[int, str | None]:
    """The largest ``logprobs`` the server takes up to :data:`WANTED_K`, and why not more."""
    try:
        client.complete(ep, PROBE_TEXT, max_tokens=1, logprobs=WANTED_K, timeout=clock.left())
        return WANTED_K, None
    except ServedError as err:
        if err.kind != "status":
            raise
        said = re.search(r"(\d+)", str(err).split("):", 1)[-1])
        cap = int(said.group(1)) if said and 0 < int(said.group(1)) < WANTED_K else 5
        return cap, f"the server refused logprobs={WANTED_K} ({shorten(err, 120)})"


def _scoring(ep: Endpoint, clock: _Clock) -> tuple[bool, str | None]:
    """Whether the server returns the prompt's own log-probabilities (echo), and why not."""
    echoed = client.complete(ep, PROBE_TEXT, max_tokens=1, logprobs=1, echo=True, timeout=clock.left())
    scored = [lp for lp, at in zip(echoed.token_logprobs, echoed.text_offset, strict=False)
              if lp is not None and at < len(PROBE_TEXT)]
    if echoed.text.startswith(PROBE_TEXT) and len(scored) >= 2:
        return True, None
    return False, ("asked to echo the prompt with its log-probabilities, the server returned none for the prompt's "
                   "tokens (llama.cpp's llama-server ignores echo; llama-cpp-python needs --logits_all true)")


def _decoding(ep: Endpoint, clock: _Clock) -> tuple[bool, int, bool, list[tuple[str, str]]]:
    """(top_k, max_k, prompt_logprobs, what is missing and why) from a few one-token completions."""
    missing: list[tuple[str, str]] = []
    try:
        out = client.complete(ep, PROBE_TEXT, max_tokens=1, logprobs=5, timeout=clock.left())
        if not (out.top_logprobs and len(out.top_logprobs[0]) >= 2):
            raise ServedError("the server answered a completion without per-token alternatives", "garbage")
        max_k, why = _max_k(ep, clock)
    except ServedError as err:  # whole-text scoring is read off the same log-probabilities: it goes too
        return False, 0, False, [("top_k", str(err)), ("prompt_logprobs", str(err))]
    try:
        scores, why_not = _scoring(ep, clock)
    except ServedError as err:
        scores, why_not = False, str(err)
    missing += [("max_k", why)] if why else []
    missing += [("prompt_logprobs", why_not)] if why_not else []
    return True, max_k, scores, missing


def _embeddings(ep: Endpoint, clock: _Clock) -> tuple[int, str | None]:
    """The embedding size (0: none) and why not."""
    try:
        return len(client.embeddings(ep, [PROBE_TEXT], timeout=clock.left())[0]), None
    except ServedError as err:
        return 0, str(err)


def probe(ep: Endpoint) -> Capabilities:
    """Ask the server what it can do (a handful of tiny requests, a few seconds on a CPU engine; all of them
    within :data:`PROBE_SECONDS` or the endpoint's timeout). Every failure is said as the reason a capability is
    missing, or the server unreachable; nothing raises but a request stopped by its page."""
    clock = _Clock(ep)
    try:
        listed = client.models(ep, timeout=clock.left())
    except ServedError as err:
        said = str(err) if err.kind != "timeout" else (
            f"{ep.shown} did not answer within {clock.seconds:.0f} s, the longest its probe waits (the endpoint's "
            f"timeout, {PROBE_SECONDS:.0f} s at most): is the server up, and not overloaded?")
        return Capabilities(ep.name, False, error=said, seconds=time.monotonic() - clock.began)
    ids = tuple(m.id for m in listed)
    if ep.model and ep.model not in ids and ids:
        shown = ", ".join(repr(excerpt(i, 60)) for i in ids[:5])
        return Capabilities(ep.name, False, served_models=ids, seconds=time.monotonic() - clock.began,
                            error=f"{ep.shown} does not serve the model {ep.model!r}; it serves {shown}. Set the "
                                  "endpoint's model to one of them.")
    engine, version = _engine(ep, listed, clock)
    top_k, max_k, prompt_lp, missing = _decoding(ep, clock)
    dims, why = _embeddings(ep, clock)
    missing += [("embeddings", why)] if why else []
    style, why_not = find_style(ep, engine, PROBE_TEXT, clock.left)
    missing += [("tokenizer", why_not)] if why_not else []
    return Capabilities(ep.name, True, engine, version, ep.model or (ids[0] if len(ids) == 1 else ""), ids, top_k,
                        prompt_lp, max_k, dims > 0, dims, style, "", tuple(missing), time.monotonic() - clock.began,
                        complete=not (missing and clock.spent()))


_CACHE: dict[tuple[str, str, str], tuple[float, Capabilities]] = {}
_CACHE_LOCK = threading.Lock()


def capabilities(ep: Endpoint, fresh: bool = False, max_age: float | None = None) -> Capabilities:
    """The endpoint's probe, reused for :data:`REPROBE_AFTER` seconds (an unreachable one is asked again at once
    next time, so a server that comes up is seen); with ``max_age``, any probe younger than that is reused,
    reachable or not (a page run asks each endpoint once a minute at most). A probe whose time ran out before
    every answer came (a busy server) is asked again like an unreachable one: what it missed is unknown, not lacking."""
    key = (ep.name, ep.base_url, ep.model)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
    if hit and not fresh:
        age = time.monotonic() - hit[0]
        if age < max_age if max_age is not None else age < REPROBE_AFTER and hit[1].reachable and hit[1].complete:
            return hit[1]
    caps = probe(ep)
    with _CACHE_LOCK:
        _CACHE[key] = (time.monotonic(), caps)
        while len(_CACHE) > MAX_CACHED:
            del _CACHE[min(_CACHE, key=lambda k: _CACHE[k][0])]
    return caps


def capabilities_many(eps: Sequence[Endpoint], max_age: float | None = None) -> tuple[Capabilities, ...]:
    """:func:`capabilities` of several endpoints at once (one thread each, each in this request's context), so a
    page with several endpoints waits for the slowest probe, not for their sum."""
    if len(eps) <= 1:
        return tuple(capabilities(ep, max_age=max_age) for ep in eps)
    with ThreadPoolExecutor(len(eps)) as pool:
        jobs = [pool.submit(contextvars.copy_context().run, capabilities, ep, False, max_age) for ep in eps]
        return tuple(job.result() for job in jobs)


def forget(ep: Endpoint | None = None) -> None:
    """Drop cached probes (of ``ep``, or all): after a server restarts with other flags."""
    with _CACHE_LOCK:
        for key in [k for k in _CACHE if ep is None or k[:2] == (ep.name, ep.base_url)]:
            del _CACHE[key]


# What each engine needs to sample as transformers does (its own defaults differ): llama-cpp-python's server
# applies repeat_penalty 1.1, top_k 40, top_p 0.95 and min_p 0.05 unless told otherwise, so its "greedy" picked
# " France" where its own log-probabilities put " the" first (seen against the bundled Gemma). Log-probabilities
# are reported before these, so only what the server *chooses* changes.
NEUTRAL: dict[str, dict[str, object]] = {
    "llama-cpp-python": {"repeat_penalty": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0},
    "llama.cpp": {"repeat_penalty": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0},
    "vLLM": {"repetition_penalty": 1.0, "top_k": -1, "top_p": 1.0, "min_p": 0.0},
    "SGLang": {"repetition_penalty": 1.0, "top_k": -1, "top_p": 1.0, "min_p": 0.0},
}


def neutral(caps: Capabilities, **overrides: Any) -> dict[str, object]:
    """Engine-specific request fields that turn its own sampling defaults off (``overrides`` win: top_k, top_p)."""
    return {**NEUTRAL.get(caps.engine, {}), **overrides}


SERIAL_ENGINES = ("llama-cpp-python",)  # engines whose server answers one request at a time


def paced(ep: Endpoint, caps: Capabilities) -> Endpoint:
    """``ep`` as it is best driven: one request at a time when its engine answers one at a time.

    llama-cpp-python's server runs one request at a time (benchmarks/results/serving.md): more in flight only queue
    there, a queued request's wait counts against its timeout, and served occlusion ran 0.77x as fast with 2 in
    flight as with 1 (benchmarks/results/explain.md). Other engines keep the endpoint's bound.

    >>> from explorer.serving.endpoints import Endpoint
    >>> ep = Endpoint("gemma", "http://127.0.0.1:8080/v1", max_concurrent=4)
    >>> paced(ep, Capabilities(ep.base_url, True, engine="llama-cpp-python")).max_concurrent
    1
    >>> paced(ep, Capabilities(ep.base_url, True, engine="vLLM")).max_concurrent
    4
    """
    return replace(ep, max_concurrent=1) if caps.engine in SERIAL_ENGINES else ep


def served_on(ep: Endpoint, caps: Capabilities) -> RanOn:
    """The ``device`` / ``device_name`` / ``dtype`` fields of a result a server produced: where it ran, said as
    the engine, the endpoint and the model (``ran_caption`` shows "llama-cpp-python 0.3.36 · gemma at
    127.0.0.1:8080 (gemma3-270m) · as served")."""
    engine = f"{caps.engine} {caps.version}".strip()
    model = caps.model or ep.model or "its model"
    return {"device": "served", "device_name": f"{engine} · {ep.shown} at {ep.host} ({model})", "dtype": "as served"}


def require(ep: Endpoint, capability: str, purpose: str) -> Capabilities:
    """The endpoint's capabilities, or one ServedError saying why ``purpose`` cannot run on it."""
    caps = capabilities(ep)
    if caps.reachable and not caps.complete and caps.why_not(capability) is not None:
        caps = capabilities(ep, fresh=True)  # the busy server's first probe ran out of time before this answer
    if not caps.reachable:
        raise ServedError(caps.error, "refused")
    why = caps.why_not(capability)
    if why is not None or not getattr(caps, capability, False):
        raise ServedError(f"{ep.shown} cannot do {purpose}: {why or 'the server does not offer it'}.", "missing")
    return caps


def summary(ep: Endpoint, caps: Capabilities) -> dict[str, object]:
    """One table row about an endpoint and what it can do (the Models page; never a key)."""
    def can(name: str) -> str:
        return "yes" if getattr(caps, name) else "no"

    return {"model key": ep.key, "shown as": ep.shown, "server": ep.host, "model": caps.model or ep.model,
            "engine": f"{caps.engine} {caps.version}".strip() if caps.reachable else "unreachable",
            "top-k per token": can("top_k") if caps.reachable else "", "largest k": caps.max_k,
            "scores whole texts": can("prompt_logprobs") if caps.reachable else "",
            "embeddings": can("embeddings") if caps.reachable else "",
            "tokenizer": (caps.tokenizer or "no") if caps.reachable else "", "from": ep.source,
            "notes": caps.error if not caps.reachable else "; ".join(f"{k}: {v}" for k, v in caps.missing)}
