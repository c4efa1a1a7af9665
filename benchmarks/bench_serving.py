"""Served models: our client against the bare openai client, step-by-step decoding against one request, and four
sessions at once, all against a real engine (llama-cpp-python serving the bundled Gemma 3 270M GGUF on
127.0.0.1, started by explorer.serving.localengine).

1. Client overhead: one next-token request (max_tokens=1, logprobs=5) through explorer.serving.client.complete vs
   ``openai.OpenAI(base_url=..., api_key="none").completions.create`` with the same body; also a request the engine
   answers in milliseconds (no logprobs, cached prompt), where a client's own cost would show. Target: ours within
   10%.
2. Greedy for 32 tokens step by step from the client (decoding.generate: one max_tokens=1, logprobs=5 request per
   token) vs ONE request of 32 tokens with logprobs=5 (decoding.fast). Target: at most 1.5x. The engine's time is
   broken down (requests with and without logprobs) and profiled in-process (cProfile of Llama.create_completion
   on the same GGUF) to say where it goes.
3. Four sessions at once: four threads each sending a next-token request, against one alone; on the one engine
   (llama-cpp-python's server runs one request at a time behind a lock), then on four engine processes (one per
   session), with our client and with the bare openai client, so the engines' serialisation and our client's
   concurrency are told apart.

Runs alternate (which goes first flips each repeat); each figure is the best and the median of the repeats, each
ratio the median of back-to-back pairs (the machine is shared). Prints a table and writes
benchmarks/results/serving.json and benchmarks/results/serving.md.

    python benchmarks/bench_serving.py [--repeats 21] [--decode-repeats 3] [--tokens 32] [--rounds 5]
    python benchmarks/bench_serving.py --vllm-url http://127.0.0.1:8099/v1 --vllm-only   # add vLLM's rows
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import signal
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import explorer  # noqa: E402,F401  (offline defaults)

PROMPT = "The capital of France is"
SESSION_PROMPTS = ["The capital of France is", "My favourite fruit is the", "Water boils at a temperature of",
                   "The first man on the moon was"]
OUT = ROOT / "benchmarks" / "results"


def _stats(times: list[float]) -> dict:
    return {"best": min(times), "median": statistics.median(times), "all": [round(t, 5) for t in times]}


def paired(ours: Callable[[], object], theirs: Callable[[], object], repeats: int) -> dict:
    """Wall and client-CPU seconds of each, alternating which goes first; ratio = median of ours / theirs pairs."""
    walls: dict[str, list[float]] = {"ours": [], "theirs": []}
    cpus: dict[str, list[float]] = {"ours": [], "theirs": []}
    ratios, out = [], {}
    for rep in range(repeats):
        pair = [("ours", ours), ("theirs", theirs)]
        now = {}
        for name, fn in pair if rep % 2 == 0 else pair[::-1]:
            wall, cpu = time.perf_counter(), time.process_time()
            out[name] = fn()
            now[name] = time.perf_counter() - wall
            walls[name].append(now[name])
            cpus[name].append(time.process_time() - cpu)
        ratios.append(now["ours"] / now["theirs"])
    return {"ours": _stats(walls["ours"]), "theirs": _stats(walls["theirs"]),
            "ours_client_cpu": _stats(cpus["ours"]), "theirs_client_cpu": _stats(cpus["theirs"]),
            "ratio": statistics.median(ratios), "ratios": [round(r, 3) for r in ratios], "results": out}


def client_overhead(ep, repeats: int) -> dict:
    import openai

    from explorer.serving import client

    bare = openai.OpenAI(base_url=ep.base_url, api_key="none")

    def ours(lp: int | None) -> Callable[[], object]:
        return lambda: client.complete(ep, PROMPT, max_tokens=1, logprobs=lp, temperature=0.0)

    def theirs(lp: int | None) -> Callable[[], object]:
        extra = {} if lp is None else {"logprobs": lp}
        return lambda: bare.completions.create(model=ep.model, prompt=PROMPT, max_tokens=1, temperature=0.0, **extra)

    for fn in (ours(5), theirs(5), ours(None), theirs(None)):
        fn()  # warm-up: connections, the engine's prompt cache
    out = {}
    for name, lp, n in (("next_token_logprobs5", 5, repeats), ("no_logprobs", None, repeats * 5)):
        res = paired(ours(lp), theirs(lp), n)
        done = res.pop("results")
        same = not lp or {t for t, _ in done["ours"].top_logprobs[0]} == set(
            done["theirs"].choices[0].logprobs.top_logprobs[0])
        out[name] = {**res, "same_answer": bool(same)}
    bare.close()
    return out


def decode_vs_fast(ep, tokens: int, repeats: int) -> dict:
    from explorer.serving import client, decoding
    from explorer.tasks.generation import DecodingSettings

    settings = DecodingSettings("greedy", max_new_tokens=tokens)
    decoding.fast(ep, PROMPT, DecodingSettings("greedy", max_new_tokens=2))  # probe + warm-up
    res = paired(lambda: decoding.generate(ep, PROMPT, settings), lambda: decoding.fast(ep, PROMPT, settings), repeats)
    done = res.pop("results")
    res["same_tokens"] = done["ours"].tokens == done["theirs"].tokens
    res["tokens"] = len(done["theirs"].tokens)
    from explorer.serving import probe

    extra = probe.neutral(probe.capabilities(ep))  # what the explorer sends this engine

    def engine(max_tokens: int, logprobs: int | None, n: int) -> dict:
        return _stats([_timed(lambda: client.complete(ep, PROMPT, max_tokens=max_tokens, logprobs=logprobs,
                                                      extra=extra)) for _ in range(n)])

    res["engine"] = {"1_token_logprobs5": engine(1, 5, 5), "1_token_no_logprobs": engine(1, None, 5),
                     f"{tokens}_tokens_no_logprobs": engine(tokens, None, 3)}
    return res


def _timed(fn: Callable[[], object]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def profile_engine(tokens: int = 8, repeats: int = 2) -> dict:
    """Where llama-cpp-python's time goes for a completion with logprobs=5: cProfile of Llama.create_completion
    in this process, on the same GGUF with the server's settings (logits_all, n_ctx 2048); the quickest of
    ``repeats`` runs (the machine is shared), and the same completion without logprobs."""
    import llama_cpp

    from explorer.serving import localengine

    llm = llama_cpp.Llama(model_path=str(localengine.bundled_gguf()), logits_all=True, n_ctx=2048,
                          n_threads=os.cpu_count() or 2, verbose=False)
    kw = {"temperature": 0.0, "repeat_penalty": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0}
    llm.create_completion(PROMPT, max_tokens=1, logprobs=5, **kw)
    runs = []
    for _ in range(repeats):
        prof = cProfile.Profile()
        began = time.perf_counter()
        prof.enable()
        llm.create_completion(PROMPT, max_tokens=tokens, logprobs=5, **kw)
        prof.disable()
        runs.append((time.perf_counter() - began, prof))
    total, prof = min(runs, key=lambda r: r[0])
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]  (pstats keeps its table there)
    rows = {}
    for (_, _, name), (calls, _, tottime, cumtime, _) in stats.items():
        if name in ("<built-in method builtins.sorted>", "decode", "logits_to_logprobs", "detokenize", "sample"):
            rows[name.replace("<built-in method builtins.", "").rstrip(">")] = {
                "calls": calls, "seconds": round(tottime if name.startswith("<") else cumtime, 3)}
    no_lp = min(_timed(lambda: llm.create_completion(PROMPT, max_tokens=tokens, **kw)) for _ in range(repeats))
    return {"tokens": tokens, "seconds": round(total, 3), "without_logprobs_seconds": round(no_lp, 3),
            "all_seconds": [round(r[0], 3) for r in runs], "n_vocab": 262_144, "functions": rows}


def _together(fns: list[Callable[[], object]]) -> tuple[float, int, float]:
    """All of ``fns`` started at once, one thread each: (wall seconds, the most requests in flight at one moment,
    milliseconds between the first request sent and the last). A client that serialised would show 1 in flight."""
    gate = threading.Barrier(len(fns) + 1)
    errors: list[BaseException] = []
    spans: list[tuple[float, float]] = []

    def run(fn: Callable[[], object]) -> None:
        gate.wait()
        began = time.perf_counter()
        try:
            fn()
        except BaseException as err:  # noqa: BLE001  (reported after the join)
            errors.append(err)
        spans.append((began, time.perf_counter()))

    threads = [threading.Thread(target=run, args=(fn,)) for fn in fns]
    for t in threads:
        t.start()
    gate.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    peak = max(sum(a <= t < b for a, b in spans) for t, _ in spans)
    return time.perf_counter() - began, peak, (max(a for a, _ in spans) - min(a for a, _ in spans)) * 1000


def sessions(eps: list, rounds: int, bare: bool = False, logprobs: int | None = 5) -> dict:
    """Each session's next-token request alone (one after another), and all four at once, alternating.
    ``logprobs=None``: a request the engine answers in milliseconds, where only the client's own concurrency
    (threads, pooled connections, the endpoint's bound) is left to measure."""
    import openai

    from explorer.serving import client

    clients = [openai.OpenAI(base_url=ep.base_url, api_key="none") for ep in eps] if bare else []

    def request(i: int) -> Callable[[], object]:
        ep, prompt = eps[i % len(eps)], SESSION_PROMPTS[i]
        if bare:
            extra = {} if logprobs is None else {"logprobs": logprobs}
            return lambda: clients[i % len(eps)].completions.create(model=ep.model, prompt=prompt, max_tokens=1,
                                                                   temperature=0.0, **extra)
        return lambda: client.complete(ep, prompt, max_tokens=1, logprobs=logprobs, temperature=0.0)

    fns = [request(i) for i in range(len(SESSION_PROMPTS))]
    alone, together, ratios, peaks, spreads = [], [], [], [], []
    _together(fns)  # warm-up (and each engine's prompt cache, where each engine has its own session)
    for rnd in range(rounds):
        for first in ("alone", "together") if rnd % 2 == 0 else ("together", "alone"):
            if first == "alone":
                singles = [_timed(fn) for fn in fns]
                alone.append(statistics.median(singles))
            else:
                wall, peak, spread = _together(fns)
                together.append(wall)
                peaks.append(peak)
                spreads.append(spread)
        ratios.append(together[-1] / alone[-1])
    for c in clients:
        c.close()
    return {"alone": _stats(alone), "together": _stats(together), "ratio": statistics.median(ratios),
            "ratios": [round(r, 3) for r in ratios], "engines": len(eps), "peak_in_flight": min(peaks),
            "send_spread_ms": round(max(spreads), 2)}


def machine() -> dict:
    import httpx
    import llama_cpp
    import openai

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "llama_cpp_python": llama_cpp.__version__, "openai": openai.__version__, "httpx": httpx.__version__,
            "engine": "llama-cpp-python server, bundled Gemma 3 270M Q4_K_M GGUF, n_ctx 2048, --logits_all true",
            "load_average": list(os.getloadavg())}


def run(repeats: int, decode_repeats: int, tokens: int, rounds: int) -> dict:
    from explorer.serving import localengine

    res: dict = {"machine": machine(), "prompt": PROMPT, "tokens": tokens}
    with localengine.running(name="bench") as engine:
        ep = replace(engine.endpoint, timeout=600.0)  # 32 tokens with logprobs take over a minute on a busy CPU
        print("1. client overhead…", flush=True)
        res["client"] = client_overhead(ep, repeats)
        print("2. step by step vs one request…", flush=True)
        res["decode"] = decode_vs_fast(ep, tokens, decode_repeats)
        print("3. four sessions on one engine…", flush=True)
        res["one_engine"] = sessions([ep] * 4, rounds)
    print("   profiling the engine in-process…", flush=True)
    res["profile"] = profile_engine()
    print("3. four sessions on four engines…", flush=True)
    engines = [localengine.start(name=f"bench{i}", threads=1, n_ctx=512) for i in range(4)]
    try:
        eps = [replace(e.endpoint, timeout=600.0) for e in engines]
        res["four_engines"] = sessions(eps, rounds)
        res["four_engines_bare_openai"] = sessions(eps, rounds, bare=True)
        res["four_engines_quick"] = sessions(eps, rounds * 4, logprobs=None)
        res["four_engines_quick_bare_openai"] = sessions(eps, rounds * 4, bare=True, logprobs=None)
    finally:
        for e in engines:
            e.stop()
    res["machine"]["load_average_end"] = list(os.getloadavg())
    return res


def run_vllm(url: str, repeats: int, decode_repeats: int, tokens: int, rounds: int) -> dict:
    """The same measurements against a vLLM server already running at ``url`` (``make test-vllm`` shows how to
    start the CPU build): an engine that batches requests and computes the top-k itself."""
    from explorer.serving import probe
    from explorer.serving.endpoints import Endpoint

    ep = Endpoint("vllm", url, "gemma3-270m", timeout=600.0)
    caps = probe.capabilities(ep)
    if caps.engine != "vLLM":
        raise SystemExit(f"{url} is not a vLLM server ({caps.engine}: {caps.error})")
    print("vLLM: client overhead, step by step vs one request, four sessions…", flush=True)
    return {"version": caps.version, "client": client_overhead(ep, repeats),
            "decode": decode_vs_fast(ep, tokens, decode_repeats), "one_engine": sessions([ep] * 4, rounds),
            "load_average": list(os.getloadavg())}


def vllm_rows(v: dict, tokens: int) -> list[tuple[str, str, str, str, str]]:
    ms = lambda s: f"{s['median'] * 1000:.1f} ms (best {s['best'] * 1000:.1f})"  # noqa: E731
    sec = lambda s: f"{s['median']:.2f} s (best {s['best']:.2f})"  # noqa: E731
    c, d, one = v["client"]["next_token_logprobs5"], v["decode"], v["one_engine"]
    return [
        ("vLLM: next-token request (logprobs=5), client.complete vs bare openai", ms(c["ours"]), ms(c["theirs"]),
         f"{c['ratio']:.3f}x", f"<= 1.10x: {'met' if c['ratio'] <= 1.10 else 'missed'}"),
        (f"vLLM: greedy {tokens} tokens, step by step vs one request", sec(d["ours"]), sec(d["theirs"]),
         f"{d['ratio']:.3f}x",
         f"<= 1.5x: {'met' if d['ratio'] <= 1.5 else 'missed'} (same tokens: {d['same_tokens']})"),
        ("vLLM: 4 sessions at once vs one alone, ONE engine (our client)", ms(one["together"]), ms(one["alone"]),
         f"{one['ratio']:.2f}x", f"well under 4x: {'met' if one['ratio'] < 3 else 'missed'} (in flight at once: "
         f"{one['peak_in_flight']} of 4 in every round)"),
    ]


def rows(res: dict) -> list[tuple[str, str, str, str, str]]:
    """(measurement, ours, reference, ratio, target and verdict) for the table."""
    c, d = res["client"], res["decode"]
    ms = lambda s: f"{s['median'] * 1000:.1f} ms (best {s['best'] * 1000:.1f})"  # noqa: E731
    sec = lambda s: f"{s['median']:.2f} s (best {s['best']:.2f})"  # noqa: E731
    out = []
    for key, what in (("next_token_logprobs5", "next-token request (max_tokens=1, logprobs=5): client.complete vs "
                                               "bare openai"),
                      ("no_logprobs", "a request the engine answers in ms (max_tokens=1, no logprobs): same")):
        r = c[key]
        out.append((what, ms(r["ours"]), ms(r["theirs"]), f"{r['ratio']:.3f}x",
                    f"<= 1.10x: {'met' if r['ratio'] <= 1.10 else 'missed'}"))
    out.append((f"greedy {res['tokens']} tokens: step by step (decoding.generate) vs one request (decoding.fast)",
                sec(d["ours"]), sec(d["theirs"]), f"{d['ratio']:.3f}x",
                f"<= 1.5x: {'met' if d['ratio'] <= 1.5 else 'missed'}"))
    cores = res["machine"]["cores"] or 1
    for key, what in (("one_engine", "4 sessions at once vs one alone, ONE engine (our client)"),
                      ("four_engines", "4 sessions at once vs one alone, 4 engine processes (our client)"),
                      ("four_engines_bare_openai", "4 sessions at once vs one alone, 4 engine processes (bare openai)"),
                      ("four_engines_quick", "same, 4 engines, a request answered in ms (no logprobs; our client)"),
                      ("four_engines_quick_bare_openai", "same, 4 engines, answered in ms (bare openai)")):
        r = res[key]
        if key == "one_engine":
            verdict = "4x if the engine serialises: " + ("it does" if r["ratio"] >= 3 else "it does not")
        elif key == "four_engines":
            verdict = (f"well under 4x: {'met' if r['ratio'] < 3 else 'missed'}; {4 / cores:.1f}x at best for 4 "
                       f"CPU-bound engines on {cores} cores")
        else:
            verdict = "for comparison"
        timing = ms if "quick" in key else sec
        verdict += f" (in flight at once: {r['peak_in_flight']} of 4 in every round)"
        out.append((what, timing(r["together"]), timing(r["alone"]), f"{r['ratio']:.2f}x", verdict))
    if "vllm" in res:
        out += vllm_rows(res["vllm"], res["tokens"])
    return out


def why(res: dict) -> list[str]:
    """What the numbers say, from the numbers."""
    d, p, eng = res["decode"], res["profile"], res["decode"]["engine"]
    n = res["tokens"]
    one_lp, one_bare = eng["1_token_logprobs5"]["median"], eng["1_token_no_logprobs"]["median"]
    many_bare = eng[f"{n}_tokens_no_logprobs"]["median"]
    sort = p["functions"].get("sorted", {"calls": 0, "seconds": 0.0})
    dec = p["functions"].get("decode", {"calls": 0, "seconds": 0.0})
    lsm = p["functions"].get("logits_to_logprobs", {"calls": 0, "seconds": 0.0})
    per_step = d["ours"]["median"] / max(d["tokens"], 1)
    per_token = d["theirs"]["median"] / max(d["tokens"], 1)
    return [
        f"- Step by step: {per_step:.2f} s per token (one request each); one request: {per_token:.2f} s per token; "
        f"same tokens both ways: {d['same_tokens']}.",
        f"- The engine's own time: a next-token request takes {one_lp * 1000:.0f} ms with logprobs=5 and "
        f"{one_bare * 1000:.1f} ms without (prompt cached); {n} tokens without logprobs take {many_bare:.2f} s in one "
        "request. So nearly all of a served token's cost here is the log-probabilities, not the request.",
        f"- In-process profile (Llama.create_completion, {p['tokens']} tokens, logprobs=5, {p['seconds']:.2f} s; "
        f"{p['without_logprobs_seconds']:.2f} s without logprobs): `sorted` {sort['calls']} calls, "
        f"{sort['seconds']:.2f} s ({sort['seconds'] / p['seconds']:.0%}): llama-cpp-python sorts all "
        f"{p['n_vocab']:,} (log-probability, id) pairs in Python at every position to pick the top 5; the model's "
        f"own forward passes (`decode`) take {dec['seconds']:.2f} s for {dec['calls']} calls.",
        f"- Hence step by step costs {d['ratio']:.2f}x one request (paired ratios {min(d['ratios']):.2f} to "
        f"{max(d['ratios']):.2f}: the machine is shared): both pay the sort once per token; a step adds its own "
        f"request (~{one_bare * 1000:.0f} ms) and llama-cpp-python's log-softmax over every position so far "
        f"(`logits_to_logprobs`: {lsm['seconds']:.3f} s in the profile's {p['tokens']}-token run), small beside "
        "the sort. An engine that computes top-k natively (vLLM, llama.cpp's llama-server) would shift the balance "
        "towards the one-request mode; not measured here.",
        f"- Concurrency: llama-cpp-python's server runs one request at a time (one model behind its "
        f"llama_outer_lock/llama_inner_lock), so 4 sessions on one engine take {res['one_engine']['ratio']:.2f}x one "
        f"alone. On 4 engine processes our client's 4 threads take {res['four_engines']['ratio']:.2f}x one alone "
        f"(the bare openai client {res['four_engines_bare_openai']['ratio']:.2f}x; serialised would be 4x): what "
        f"remains above 1x is {res['machine']['cores']} CPU cores shared by 4 engines that each sort on one. "
        "With requests the engines answer in milliseconds, 4 at once take "
        f"{res['four_engines_quick']['ratio']:.2f}x one alone with our client "
        f"({res['four_engines_quick_bare_openai']['ratio']:.2f}x with the bare openai client): there the CPU "
        f"work of each request (the engine's web server, and the client's JSON under this process's one GIL) meets "
        f"the same {res['machine']['cores']} cores. Our client does not serialise requests (the endpoint's bound, "
        "max_concurrent, is 4 by default). Counted from each thread's "
        f"send and answer times: {res['one_engine']['peak_in_flight']} of 4 requests were in flight at once in every "
        f"round, even on the one engine (sent within {res['one_engine']['send_spread_ms']:.1f} ms of each other), "
        "which queues them; the bare openai client's figures are within the run-to-run noise of ours.",
    ]


def markdown(res: dict) -> str:
    m = res["machine"]
    lines = ["# Served models: client overhead, step-by-step decoding, concurrent sessions", "",
             f"Engine: {m['engine']} on 127.0.0.1 (started by explorer.serving.localengine). Machine: {m['cpu']}, "
             f"{m['cores']} cores, Python {m['python']}, llama-cpp-python {m['llama_cpp_python']}, openai "
             f"{m['openai']}, httpx {m['httpx']}; load average {m['load_average'][0]:.1f} at the start, "
             f"{m['load_average_end'][0]:.1f} at the end (a shared machine). Prompt {res['prompt']!r}. Runs alternate; "
             "each time is the median of the repeats (best in brackets), each ratio the median of back-to-back pairs.",
             "", "| measurement | ours | reference | ratio | target |", "|---|---|---|---|---|"]
    lines += [f"| {' | '.join(r)} |" for r in rows(res)]
    c = res["client"]
    lines += ["", "Client CPU per request (this process): "
              f"ours {c['no_logprobs']['ours_client_cpu']['median'] * 1000:.2f} ms, "
              f"bare openai {c['no_logprobs']['theirs_client_cpu']['median'] * 1000:.2f} ms (the no-logprobs request). "
              f"Same top-5 from both clients: {c['next_token_logprobs5']['same_answer']}.", "", "## Why", ""]
    lines += why(res)
    if "vllm" in res:
        v = res["vllm"]
        lines += ["", f"## vLLM {v['version']} (CPU build, float32, the converted bundled Gemma, same machine)", "",
                  "The vLLM rows above: an engine that batches requests from many clients (continuous batching) and "
                  f"computes the top-k itself. 4 sessions at once take {v['one_engine']['ratio']:.2f}x one alone on "
                  "ONE engine (llama-cpp-python: 4x, it runs one request at a time); step by step costs "
                  f"{v['decode']['ratio']:.2f}x one request, each step being a round trip of its own. Load average "
                  f"{v['load_average'][0]:.1f} at the start of this part."]
    return "\n".join(lines) + "\n"


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: the engines' finally blocks still run
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=21, help="pairs of next-token requests (5x for the no-logprobs one)")
    ap.add_argument("--decode-repeats", type=int, default=3, help="pairs of whole 32-token decodes")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the four-session measurement")
    ap.add_argument("--render", action="store_true", help="only rewrite serving.md from serving.json")
    ap.add_argument("--vllm-url", default=None, help="also measure a running vLLM server (e.g. http://127.0.0.1:8099/v1)")
    ap.add_argument("--vllm-only", action="store_true", help="with --vllm-url: measure only vLLM, keep the rest of "
                                                             "serving.json")
    args = ap.parse_args()
    if args.vllm_only and args.vllm_url:
        res = json.loads((OUT / "serving.json").read_text())
        res["vllm"] = run_vllm(args.vllm_url, args.repeats, args.decode_repeats, args.tokens, args.rounds)
        (OUT / "serving.json").write_text(json.dumps(res, indent=2, default=str))
        (OUT / "serving.md").write_text(markdown(res))
        print("\n".join(" | ".join(r) for r in vllm_rows(res["vllm"], res["tokens"])))
        return
    if args.render:
        (OUT / "serving.md").write_text(markdown(json.loads((OUT / "serving.json").read_text())))
        return
    res = run(args.repeats, args.decode_repeats, args.tokens, args.rounds)
    if args.vllm_url:
        res["vllm"] = run_vllm(args.vllm_url, args.repeats, args.decode_repeats, args.tokens, args.rounds)
    table = rows(res)
    width = max(len(r[0]) for r in table)
    print(f"{'measurement':<{width}}  {'ours':>24}  {'reference':>24}  {'ratio':>8}  target")
    for r in table:
        print(f"{r[0]:<{width}}  {r[1]:>24}  {r[2]:>24}  {r[3]:>8}  {r[4]}")
    print("\n".join(why(res)))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "serving.json").write_text(json.dumps(res, indent=2, default=str))
    (OUT / "serving.md").write_text(markdown(res))
    print(f"Written to {OUT / 'serving.json'} and {OUT / 'serving.md'}")


if __name__ == "__main__":
    main()
