"""Compression lab: each method's size and latency as ratios to the original, measured in the same run.

The reference is the unmodified float32 model (what a user runs without compression), timed alternately
with each compressed copy (explorer.compression.measure.time_pair), so both medians see the same machine
load; the ratio is the figure to read on a shared machine. Quality (cosine agreement / perplexity, top-1
agreement, probes kept) comes from the same study. Prints a table and writes
benchmarks/results/compression-<model>.json.

    python benchmarks/bench_compression.py [--model sentence-bert] [--methods int8,bf16,prune-50,heads-25]
                                           [--repeats 5] [--threads 2] [--device cpu] [--models-dir DIR]

FastBERT's early exit runs the same way on a lab model trained with exits (the reference is then the
full model, every layer, timed alternately with adaptive inference one example at a time):

    python -m explorer pretrain mlm --steps 300 --exits
    python benchmarks/bench_compression.py --model lab/mlm-tiny-300steps-seed0 \
        --methods exit-0.2,exit-0.5,exit-0.8,exit-1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import explorer  # noqa: E402,F401  (offline defaults before transformers is imported)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="sentence-bert")
    parser.add_argument("--methods", default="int8,bf16,prune-50,heads-25")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--models-dir", default=None, help="models folder (lab/NAME models live in its lab/)")
    args = parser.parse_args()

    import torch

    from explorer.compression import study

    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    result = study.run(args.model, args.methods.split(","), device=args.device, repeats=args.repeats,
                       models_dir=args.models_dir,
                       progress=lambda f, what: print(f"[{f:4.0%}] {what}", file=sys.stderr))
    seconds = time.perf_counter() - start
    rows = []
    print(f"{result.name} on {result.device_name}, {args.threads} threads, repeats {args.repeats}, "
          f"load average {os.getloadavg()[0]:.1f} at the end, {seconds:.0f} s in all")
    print(f"{'method':<10} {'size MB':>8} {'x size':>7} {'ms':>9} {'orig ms':>9} {'x time':>7}  quality")
    for r in result.records():
        q = r["quality"]
        row = {"method": r["method"], "size_mb": r["size_bytes"] / 1e6,
               "size_ratio": r["size_bytes"] / r["baseline_size_bytes"], "latency_ms": r["latency_ms"],
               "baseline_latency_ms": r["baseline_latency_ms"],
               "latency_ratio": r["latency_ms"] / r["baseline_latency_ms"], "quality": q}
        rows.append(row)
        extra = ", ".join(f"{k} {v:.4g}" for k, v in q.items() if k not in ("metric", "value", "baseline_value"))
        print(f"{row['method']:<10} {row['size_mb']:>8.1f} {row['size_ratio']:>7.3f} {row['latency_ms']:>9.1f} "
              f"{row['baseline_latency_ms']:>9.1f} {row['latency_ratio']:>7.2f}  {q['metric']} {q['value']:.4f} "
              f"(original {q['baseline_value']:.4f}); {extra}")
    out = ROOT / "benchmarks" / "results" / f"compression-{args.model.replace('/', '_')}.json"
    out.write_text(json.dumps({
        "model": args.model, "device": result.device_name, "threads": args.threads, "repeats": args.repeats,
        "torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "load_average_end": os.getloadavg(), "seconds": round(seconds, 1),
        "baseline_size_mb": result.baseline.size_bytes / 1e6, "notes": [n.text for n in result.notices],
        "rows": rows}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
