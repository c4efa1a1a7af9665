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

import re
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

from explorer.core.errors import shorten
from explorer.serving import client
from explorer.serving.client import ServedError
from explorer.serving.endpoints import Endpoint
from explorer.serving.tokenizer import find_style

__all__ = ["Capabilities", "PROBE_TEXT", "capabilities", "forget", "neutral", "probe", "require", "served_on",
           "summary"]

PROBE_TEXT = "The capital of France is"
WANTED_K = 20  # the most alternatives a page asks for per step (the table's 30 rows are cut to it where refused)
PROBE_SECONDS = 20.0  # each probe request's own timeout: a probe never waits a page's whole budget
REPROBE_AFTER = 300.0  # seconds a probe is trusted (a restarted server may come back with other flags)


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

    def why_not(self, capability: str) -> str | None:
        """The reason ``capability`` is missing, or None when the server has it."""
        if not self.reachable:
            return self.error
        return dict(self.missing).get(capability)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["missing"] = dict(self.missing)
        return out


def _engine(ep: Endpoint, listed: list[dict[str, object]]) -> tuple[str, str]:
    """(engine, version) from what the server says about itself; never fails."""
    owners = {str(m.get("owned_by", "")).lower() for m in listed}
    if "vllm" in owners:
        try:
            return "vLLM", str(client.call(ep, "GET", "/version", root=True, timeout=5).get("version", ""))
        except (ServedError, AttributeError):
            return "vLLM", ""
    if "llamacpp" in owners:
        return "llama.cpp", ""
    if "sglang" in owners:
        return "SGLang", ""
    if "library" in owners or "ollama" in owners:
        return "Ollama", ""
    try:
        info = client.call(ep, "GET", "/openapi.json", root=True, timeout=5).get("info", {})
    except (ServedError, AttributeError):
        info = {}
    title = str(info.get("title", "")) if isinstance(info, dict) else ""
    if "llama" in title.lower():
        return "llama-cpp-python", str(info.get("version", ""))
    if "text generation inference" in title.lower():
        return "TGI", str(info.get("version", ""))
    return ("unknown", "") if not title else (shorten(title, 40), str(info.get("version", "")))


def _max_k(ep: Endpoint) -> tuple[int, str | None]:
    """The largest ``logprobs`` the server takes up to :data:`WANTED_K`, and why not more."""
    try:
        client.complete(ep, PROBE_TEXT, max_tokens=1, logprobs=WANTED_K, timeout=PROBE_SECONDS)
        return WANTED_K, None
    except ServedError as err:
        if err.kind != "status":
            raise
        said = re.search(r"(\d+)", str(err).split("):", 1)[-1])
        cap = int(said.group(1)) if said and 0 < int(said.group(1)) < WANTED_K else 5
        return cap, f"the server refused logprobs={WANTED_K} ({shorten(err, 120)})"


def probe(ep: Endpoint) -> Capabilities:
    """Ask the server what it can do (a handful of tiny requests, a few seconds on a CPU engine)."""
    began = time.perf_counter()
    try:
        listed = client.models(ep, timeout=PROBE_SECONDS)
    except ServedError as err:
        return Capabilities(ep.name, False, error=str(err), seconds=time.perf_counter() - began)
    ids = tuple(m["id"] for m in listed)
    if ep.model and ep.model not in ids and ids:
        return Capabilities(ep.name, False, served_models=ids, seconds=time.perf_counter() - began,
                            error=f"{ep.shown} does not serve the model {ep.model!r}; it serves "
                                  f"{', '.join(map(repr, ids[:5]))}. Set the endpoint's model to one of them.")
    engine, version = _engine(ep, listed)
    missing: list[tuple[str, str]] = []
    top_k = prompt_lp = embeds = False
    max_k = dims = 0
    try:
        out = client.complete(ep, PROBE_TEXT, max_tokens=1, logprobs=5, timeout=PROBE_SECONDS)
        top_k = bool(out.top_logprobs) and len(out.top_logprobs[0]) >= 2
        if not top_k:
            missing.append(("top_k", "the server answered a completion without per-token alternatives"))
    except ServedError as err:
        missing.append(("top_k", str(err)))
    if top_k:
        max_k, why = _max_k(ep)
        if why:
            missing.append(("max_k", why))
        try:
            echoed = client.complete(ep, PROBE_TEXT, max_tokens=1, logprobs=1, echo=True, timeout=PROBE_SECONDS)
            scored = [lp for lp, at in zip(echoed.token_logprobs, echoed.text_offset, strict=False)
                      if lp is not None and at < len(PROBE_TEXT)]
            prompt_lp = echoed.text.startswith(PROBE_TEXT) and len(scored) >= 2
            if not prompt_lp:
                missing.append(("prompt_logprobs", "asked to echo the prompt with its log-probabilities, the server "
                                "returned none for the prompt's tokens (llama.cpp's llama-server ignores echo; "
                                "llama-cpp-python needs --logits_all true)"))
        except ServedError as err:
            missing.append(("prompt_logprobs", str(err)))
    try:
        vector = client.embeddings(ep, [PROBE_TEXT], timeout=PROBE_SECONDS)[0]
        embeds, dims = True, len(vector)
    except ServedError as err:
        missing.append(("embeddings", str(err)))
    style, why_not = find_style(ep, engine, PROBE_TEXT, PROBE_SECONDS)
    if why_not:
        missing.append(("tokenizer", why_not))
    return Capabilities(ep.name, True, engine, version, ep.model or (ids[0] if len(ids) == 1 else ""), ids, top_k,
                        prompt_lp, max_k, embeds, dims, style, "", tuple(missing), time.perf_counter() - began)


_CACHE: dict[tuple[str, str, str], tuple[float, Capabilities]] = {}
_CACHE_LOCK = threading.Lock()


def capabilities(ep: Endpoint, fresh: bool = False) -> Capabilities:
    """The endpoint's probe, reused for :data:`REPROBE_AFTER` seconds (an unreachable one is asked again at once
    next time, so a server that comes up is seen)."""
    key = (ep.name, ep.base_url, ep.model)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
    if hit and not fresh and time.monotonic() - hit[0] < REPROBE_AFTER and hit[1].reachable:
        return hit[1]
    caps = probe(ep)
    with _CACHE_LOCK:
        _CACHE[key] = (time.monotonic(), caps)
    return caps


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


def served_on(ep: Endpoint, caps: Capabilities) -> dict[str, str]:
    """The ``device`` / ``device_name`` / ``dtype`` fields of a result a server produced: where it ran, said as
    the engine, the endpoint and the model (``ran_caption`` shows "llama-cpp-python 0.3.36 · gemma at
    127.0.0.1:8080 (gemma3-270m) · as served")."""
    engine = f"{caps.engine} {caps.version}".strip()
    model = caps.model or ep.model or "its model"
    return {"device": "served", "device_name": f"{engine} · {ep.shown} at {ep.host} ({model})", "dtype": "as served"}


def require(ep: Endpoint, capability: str, purpose: str) -> Capabilities:
    """The endpoint's capabilities, or one ServedError saying why ``purpose`` cannot run on it."""
    caps = capabilities(ep)
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
            "top-k per token": can("top_k") if caps.reachable else "", "largest k": caps.max_k or "",
            "scores whole texts": can("prompt_logprobs") if caps.reachable else "",
            "embeddings": can("embeddings") if caps.reachable else "",
            "tokenizer": (caps.tokenizer or "no") if caps.reachable else "", "from": ep.source,
            "notes": caps.error if not caps.reachable else "; ".join(f"{k}: {v}" for k, v in caps.missing)}
