"""The local engine's log-probability ranking (explorer/serving/enginesort.py) against the stock llama-cpp-python
server: the same GGUF, flags and requests; the same answers, and how much sooner.

What a user would otherwise run is ``python -m llama_cpp.server`` with the flags explorer.serving.localengine gives
it. Both engines run side by side on 127.0.0.1; each request goes to one, then the other (which goes first flips
each repeat), so the machine's load falls on both alike. Three requests, the explorer's three uses of an engine:

1. next token: ``max_tokens=1, logprobs=5`` (Decoding's next-token table, each step of step-by-step decoding)
2. scoring: a 12-word text echoed with its prompt log-probabilities (``echo, max_tokens=1, logprobs=1``): how
   fill-mask, spans and QA score each candidate
3. 8 greedy tokens with ``logprobs=5`` in one request (Decoding's one-request mode)

Each answer of ours must equal the stock engine's, field by field (``id`` and ``created`` aside); the script stops
otherwise. Writes benchmarks/results/enginesort.json and .md.

    python benchmarks/bench_enginesort.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import explorer  # noqa: E402,F401  (offline defaults)

OUT = ROOT / "benchmarks" / "results"
REQUESTS = {
    "next token (logprobs=5)": {"prompt": "The capital of France is", "max_tokens": 1, "logprobs": 5},
    "scoring a 12-word text (echo, logprobs=1)": {
        "prompt": "Paris is the capital and largest city of France, on the Seine.", "max_tokens": 1,
        "logprobs": 1, "echo": True},
    "8 greedy tokens (logprobs=5)": {"prompt": "The first man on the moon was", "max_tokens": 8, "logprobs": 5},
}
SAMPLING = {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0}


def post(base_url: str, model: str, body: dict) -> tuple[float, dict]:
    data = json.dumps({"model": model, **SAMPLING, **body}).encode()
    request = urllib.request.Request(base_url + "/completions", data=data,
                                     headers={"Content-Type": "application/json"})
    began = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as answer:
        out = json.load(answer)
    return time.perf_counter() - began, out


def stock_engine(port: int, log: Path) -> subprocess.Popen:
    """llama-cpp-python's own server, as a user would start it, with the local engine's flags."""
    from explorer.serving import localengine

    args = [sys.executable, "-m", "llama_cpp.server", *localengine.server_args(localengine.bundled_gguf(), port)]
    with log.open("wb") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=localengine._engine_env(port))


def wait_up(base_url: str, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base_url + "/models", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the stock engine at {base_url} did not answer in {seconds:.0f} s")


def same(a: dict, b: dict) -> bool:
    drop = ("id", "created")
    return {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


def run(repeats: int) -> dict:
    from explorer.core import persist
    from explorer.serving import localengine

    port = localengine.free_port()
    logs = persist.cache_dir() / "engine-logs"
    logs.mkdir(parents=True, exist_ok=True)
    stock_url, log = f"http://127.0.0.1:{port}/v1", logs / f"bench-stock-{port}.log"
    OUT.mkdir(parents=True, exist_ok=True)
    stock = stock_engine(port, log)
    try:
        with localengine.running(name="bench-sort") as engine:
            wait_up(stock_url)
            ours_url, model = engine.endpoint.base_url, engine.endpoint.model
            rows = {}
            for name, body in REQUESTS.items():
                post(ours_url, model, body), post(stock_url, model, body)  # warm-up: prompt caches
                times: dict[str, list[float]] = {"ours": [], "stock": []}
                ratios = []
                for rep in range(repeats):
                    order = [("ours", ours_url), ("stock", stock_url)]
                    answers, now = {}, {}
                    for who, url in order if rep % 2 == 0 else order[::-1]:
                        now[who], answers[who] = post(url, model, body)
                        times[who].append(now[who])
                    if not same(answers["ours"], answers["stock"]):
                        raise SystemExit(f"{name}: the answers differ:\n{answers['ours']}\n{answers['stock']}")
                    ratios.append(now["stock"] / now["ours"])
                rows[name] = {"ours_median_s": statistics.median(times["ours"]), "ours_best_s": min(times["ours"]),
                              "stock_median_s": statistics.median(times["stock"]),
                              "stock_best_s": min(times["stock"]), "speedup": statistics.median(ratios),
                              "speedups": [round(r, 2) for r in ratios], "same_answers": True}
    finally:
        stock.terminate()
        stock.wait(timeout=30)
    import llama_cpp
    import numpy

    return {"machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                        "python": platform.python_version(), "llama_cpp_python": llama_cpp.__version__,
                        "numpy": numpy.__version__, "load_average": os.getloadavg()[0]},
            "repeats": repeats, "requests": rows}


def markdown(res: dict) -> str:
    m = res["machine"]
    lines = ["# The local engine's log-probability ranking vs the stock llama-cpp-python server", "",
             f"Bundled Gemma 3 270M Q4_K_M GGUF (262,144-piece vocabulary), n_ctx 2048, --logits_all true, both "
             f"engines on 127.0.0.1 side by side. Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
             f"llama-cpp-python {m['llama_cpp_python']}, numpy {m['numpy']}; load average {m['load_average']:.1f} "
             f"at the end. Requests alternate between the engines ({res['repeats']} repeats); each time is the "
             f"median (best in brackets), each speed-up the median of back-to-back pairs. Every answer of ours "
             f"equalled the stock engine's, field by field.", "",
             "| request | ours | stock llama-cpp-python | speed-up |", "|---|---|---|---|"]
    for name, r in res["requests"].items():
        lines.append(f"| {name} | {r['ours_median_s']:.3f} s ({r['ours_best_s']:.3f}) | {r['stock_median_s']:.3f} s "
                     f"({r['stock_best_s']:.3f}) | {r['speedup']:.2f}x |")
    lines += ["", "Why: for each token it returns with log-probabilities, llama-cpp-python ranks the whole vocabulary "
              "with Python's `sorted` over (log-probability, id) pairs to keep the top few; the local engine "
              "ranks the same pairs with numpy and builds the same list (explorer/serving/enginesort.py)."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    res = run(args.repeats)
    (OUT / "enginesort.json").write_text(json.dumps(res, indent=2) + "\n")
    (OUT / "enginesort.md").write_text(markdown(res))
    print(markdown(res))


if __name__ == "__main__":
    main()
