"""Causal fill-in: the prefix run once with its KV cache shared vs naive whole-sentence rescoring.

    python benchmarks/bench_causal.py            # Gemma 3 270M (converted once into the models cache)
    python benchmarks/bench_causal.py --tiny     # a tiny random Gemma-3 (smoke run, seconds)

One blank, 50 candidates (the model's top next tokens after the prefix), a ~30-token prompt.
Both sides score exactly the same token sequences (prefix + candidate + suffix); runs are
interleaved (fast, naive, fast, naive, ...) so a busy machine disturbs both alike; medians and
the ratio are printed with the 1-minute load average before and after (2 cores: a second busy
process doubles a forward's time), and the benchmark asserts both give the same ranking.
Writes benchmarks/results/causal.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from explorer.runtime.resolve import resolve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"
BEFORE = ("After a long walk through the old town and a slow lunch by the river, we agreed that the city "
          "everyone calls Paris is the")
AFTER = " of France."
CANDIDATES = 50


def _load(tiny: bool):
    from explorer.runtime import bundled, loading

    if not tiny:
        bundled.ensure_converted()
        return loading.load_model(resolve("gemma3-270m"), "causal-lm")
    from tests.tiny_gemma import load_tiny_gemma

    return load_tiny_gemma(Path(tempfile.mkdtemp()) / "gemma")


def _ranking(scores: list[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: -scores[i])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import torch

    from explorer.tasks.causal.fill import causal_fill
    from explorer.tasks.causal.scoring import PrefixScorer, naive_scores

    load_before = os.getloadavg()[0]  # another process on 2 cores doubles a forward's time: printed with the figures
    loaded = _load(args.tiny)
    tok = loaded.tokenizer
    prefix = list(tok(BEFORE)["input_ids"])
    suffix = list(tok(AFTER, add_special_tokens=False)["input_ids"])
    middles = [(i,) for i in PrefixScorer(loaded.model, prefix).next_logprobs.topk(CANDIDATES).indices.tolist()]
    fast_runs, naive_runs, fill_runs = [], [], []
    for _ in range(args.rounds):
        t = time.perf_counter()
        fast = PrefixScorer(loaded.model, prefix).scores(middles, suffix)
        fast_runs.append(time.perf_counter() - t)
        t = time.perf_counter()
        naive = naive_scores(loaded.model, prefix, middles, suffix)
        naive_runs.append(time.perf_counter() - t)
        t = time.perf_counter()
        causal_fill(loaded, BEFORE + " ___" + AFTER, top_k=10, candidates=CANDIDATES)
        fill_runs.append(time.perf_counter() - t)
        print(f"round: prefix-KV {fast_runs[-1]:.2f} s, naive {naive_runs[-1]:.2f} s, "
              f"causal_fill {fill_runs[-1]:.2f} s", flush=True)
    same = _ranking(fast) == _ranking(naive)
    out = {"model": loaded.key, "prompt_tokens": len(prefix) + 1 + len(suffix), "candidates": CANDIDATES,
           "threads": torch.get_num_threads(), "rounds": args.rounds,
           "prefix_kv_ms": round(statistics.median(fast_runs) * 1000, 1),
           "naive_ms": round(statistics.median(naive_runs) * 1000, 1),
           "causal_fill_ms": round(statistics.median(fill_runs) * 1000, 1),
           "max_abs_diff": max(abs(a - b) for a, b in zip(fast, naive, strict=True)), "same_ranking": same,
           "load_avg_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)]}
    out["speedup"] = round(out["naive_ms"] / out["prefix_kv_ms"], 2)
    print(json.dumps(out, indent=1))
    assert same, "prefix-KV and naive scoring ranked the candidates differently"
    if not args.tiny:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "causal.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
