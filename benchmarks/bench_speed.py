"""DistilBERT's Table 3 on this machine: explorer.papers.speed (interleaved rounds) vs a plain sequential loop.

Sanh et al. 2019, Table 3: BERT-base 668 s and DistilBERT 410 s for the same CPU pass (1.63x). Both
methods below time the same two randomly initialised models on the same token ids at batch size 1:
``explorer.papers.speed.measure`` alternates the models round by round and takes the median; the loop a user
would otherwise write times all runs of one model, then all runs of the other. On a shared machine the
sequential ratio drifts with whatever else is running; the interleaved one should stay nearer 1.63x.
Also reports the wall time of the whole ``speed`` path (build both models + timing), whose goal is < 30 s
for two base models and 20 rounds. Writes benchmarks/results/speed.json.

    python benchmarks/bench_speed.py [--runs 20] [--seq-lens 32,128] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import explorer  # noqa: E402,F401  (offline defaults before transformers is imported)
from explorer.papers import speed  # noqa: E402

PAIR = ("bert-base", "distilbert")


def sequential_ratio(seq_len: int, runs: int) -> float:
    """The naive way: all runs of the first model, then all runs of the second; median of each."""
    import torch

    built = [speed._build(key, seq_len) for key in PAIR]
    medians = []
    with torch.inference_mode(), speed._threads(1):  # same thread count as measure()'s default
        for model, config in built:
            inputs = speed._inputs(model, config, seq_len, 28996)
            model(**inputs)  # warm-up, as the interleaved path does
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                model(**inputs)
                times.append(time.perf_counter() - t)
            medians.append(statistics.median(times))
    return medians[0] / medians[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seq-lens", default="32,128")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    paper = speed.PAPER[PAIR[0]] / speed.PAPER[PAIR[1]]
    report = {"paper_ratio": round(paper, 3), "runs": args.runs, "rows": []}
    print(f"paper (Sanh et al. 2019, Table 3): {paper:.2f}x")
    for seq_len in (int(s) for s in args.seq_lens.split(",")):
        for repeat in range(args.repeats):
            t = time.perf_counter()
            result = speed.measure(PAIR, seq_len=seq_len, runs=args.runs)
            wall = time.perf_counter() - t
            naive = sequential_ratio(seq_len, args.runs)
            row = {"seq_len": seq_len, "repeat": repeat, "interleaved_ratio": round(result.ratio, 3),
                   "sequential_ratio": round(naive, 3), "ms_per_example": [round(m, 1) for m in result.ms_per_example],
                   "speed_wall_s": round(wall, 1)}
            report["rows"].append(row)
            print(f"T={seq_len:<4} #{repeat}: interleaved {result.ratio:.2f}x  sequential {naive:.2f}x  "
                  f"({row['ms_per_example'][0]} / {row['ms_per_example'][1]} ms; speed path {wall:.1f} s)")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "speed.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
