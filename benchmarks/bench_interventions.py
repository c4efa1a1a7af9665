"""Benchmark of the interventions area, two ratios measured in one run on the bundled Gemma 3 270M.

1. **Batched patching grid vs one forward per cell.** The residual-stream grid of the default pair ("The Eiffel
   Tower is in the city of" / "The Colosseum is in the city of", 18 layers x 9 positions = 162 patched copies) as
   the page computes it (copies as rows of a few batched forwards, :mod:`explorer.interventions.plan`) against
   what a notebook loop does: one patched forward per cell (the same library, ``max_rows=1``), with the largest
   difference between the two grids' values. Target: at least 4x, identical values.
2. **nnsight's overhead on a plain forward.** The model's plain forward of the default prompt against the same
   forward traced by nnsight on the engine (the view of the model) saving its logits, and traced reading every
   block's output; alternating runs, medians and the median of back-to-back ratios. Target: at most 1.2x.

Run: ``python benchmarks/bench_interventions.py [--repeats N] [--device cpu]`` -> table on stdout,
benchmarks/results/interventions.json and interventions.md. Alternating runs and paired ratios: on a shared CPU
wall times move by 2x from run to run, a ratio of back-to-back runs much less.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from explorer.runtime.resolve import resolve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nnsight  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

import explorer  # noqa: E402,F401  (offline defaults)
from explorer.internals import sites  # noqa: E402
from explorer.interventions import patching  # noqa: E402
from explorer.interventions.engine import Engine, engine_for  # noqa: E402
from explorer.runtime.loading import LoadedModel, load_model  # noqa: E402

CLEAN, CORRUPT = "The Eiffel Tower is in the city of", "The Colosseum is in the city of"
RESULTS = ROOT / "benchmarks" / "results"


def grids(loaded: LoadedModel, repeats: int) -> dict[str, object]:
    """Alternating batched and one-per-cell grids: seconds of each, paired ratios, the values' largest gap."""
    timed: dict[str, list[float]] = {"batched": [], "per_cell": []}
    values = {}
    for _ in range(repeats):
        for name, rows in (("batched", None), ("per_cell", 1)):
            start = time.perf_counter()
            grid = patching.patch_loaded(loaded, CLEAN, CORRUPT, "Paris", "Rome", max_rows=rows)
            timed[name].append(time.perf_counter() - start)
            values[name] = grid
    flat = [(a, b) for ra, rb in zip(values["batched"].values, values["per_cell"].values, strict=True)
            for a, b in zip(ra, rb, strict=True)]
    ratios = [c / b for b, c in zip(timed["batched"], timed["per_cell"], strict=True)]
    return {"cells": values["batched"].plan.cells, "forwards_batched": values["batched"].plan.forwards,
            "forwards_per_cell": values["per_cell"].plan.forwards,
            "batched_s": [round(t, 2) for t in timed["batched"]],
            "per_cell_s": [round(t, 2) for t in timed["per_cell"]],
            "ratio": round(statistics.median(ratios), 2), "paired_ratios": [round(r, 2) for r in ratios],
            "max_abs_diff": max(abs(a - b) for a, b in flat),
            "metric_gap": round(values["batched"].clean_metric - values["batched"].corrupt_metric, 4)}


def _plain(loaded: LoadedModel, x: dict) -> Callable[[], object]:
    def run() -> object:
        with torch.no_grad():
            return loaded.model(**x).logits
    return run


def _traced(engine: Engine, x: dict, every_block: bool) -> Callable[[], object]:
    s = engine.sites

    def run() -> object:
        with engine.session(), engine.envoy.trace(**x):
            if every_block:
                blocks = nnsight.save([sites.first(engine.at(s.block(i)).output) for i in range(s.layers)])
            logits = nnsight.save(engine.envoy.output.logits)
        return (logits, blocks) if every_block else logits
    return run


def overhead(loaded: LoadedModel, repeats: int) -> dict[str, object]:
    """Plain forward vs nnsight traces of it, alternating; medians (ms) and median paired ratios."""
    x = {"input_ids": loaded.tokenizer(CLEAN, return_tensors="pt")["input_ids"].to(loaded.model.device),
         "use_cache": False}
    engine = engine_for(loaded.model)
    runs = {"plain": _plain(loaded, x), "traced": _traced(engine, x, False), "traced_blocks": _traced(engine, x, True)}
    same = torch.equal(runs["plain"]().cpu(), runs["traced"]().cpu())  # type: ignore[union-attr]
    for run in runs.values():
        run()  # warm-up: lazy imports, nnsight's parse of the block, allocator
    ms: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            ms[name].append((time.perf_counter() - start) * 1000)
    ratio = {name: round(statistics.median(t / p for t, p in zip(ms[name], ms["plain"], strict=True)), 3)
             for name in ("traced", "traced_blocks")}
    return {"median_ms": {k: round(statistics.median(v), 1) for k, v in ms.items()}, "ratio": ratio,
            "same_logits": same, "tokens": int(x["input_ids"].shape[1])}


def fixed_cost(repeats: int) -> dict[str, float]:
    """nnsight's own cost per trace, apart from any model: a trace of one 8x8 linear layer against calling it
    (medians, ms). On an idle machine the overhead on a forward is about this much over the forward's time."""
    layer = torch.nn.Linear(8, 8)
    envoy = nnsight.NNsight(layer)
    x = torch.ones(1, 8)

    def traced() -> object:
        with torch.no_grad(), envoy.trace(x):
            out = nnsight.save(envoy.output)
        return out

    def plain() -> object:
        with torch.no_grad():
            return layer(x)

    ms: dict[str, list[float]] = {"traced": [], "plain": []}
    for run in (traced, plain):
        run()
    for _ in range(repeats):
        for name, run in (("traced", traced), ("plain", plain)):
            start = time.perf_counter()
            run()
            ms[name].append((time.perf_counter() - start) * 1000)
    return {k: round(statistics.median(v), 3) for k, v in ms.items()}


def machine(loaded: LoadedModel) -> dict[str, object]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    gpu = torch.cuda.get_device_name(0) if loaded.device.startswith("cuda") else None
    return {"device": loaded.device, "gpu": gpu, "cpu": cpu, "cores": os.cpu_count(),
            "threads": torch.get_num_threads(), "dtype": loaded.dtype, "torch": torch.__version__,
            "transformers": transformers.__version__, "nnsight": nnsight.__version__,
            "load_average": [round(v, 1) for v in os.getloadavg()]}


def markdown(res: dict) -> str:
    m, g, o = res["machine"], res["grid"], res["overhead"]
    return "\n".join([
        "# Interventions: batched patching grid, and nnsight's overhead", "",
        f"`python benchmarks/bench_interventions.py` on {m['gpu'] or m['cpu']} ({m['cores']} cores, {m['threads']} "
        f"torch threads), device {m['device']}, {m['dtype']}, torch {m['torch']}, transformers {m['transformers']}, "
        f"nnsight {m['nnsight']}; bundled Gemma 3 270M; load average at the end {m['load_average']}.", "",
        "| measure | ours | the other way | ratio (median of pairs) | target | values |", "|---|---|---|---|---|---|",
        f"| residual grid, {g['cells']} cells | batched, {g['forwards_batched']} forwards: {g['batched_s']} s | "
        f"one forward per cell, {g['forwards_per_cell']} forwards: {g['per_cell_s']} s | **{g['ratio']}x faster** "
        f"{g['paired_ratios']} | >= 4x | max abs diff {g['max_abs_diff']:.2e} |",
        f"| nnsight trace, logits saved | {o['median_ms']['traced']} ms | plain forward {o['median_ms']['plain']} ms |"
        f" **{o['ratio']['traced']}x** | <= 1.2x | same logits: {o['same_logits']} |",
        f"| nnsight trace, every block read | {o['median_ms']['traced_blocks']} ms | plain forward "
        f"{o['median_ms']['plain']} ms | {o['ratio']['traced_blocks']}x | | |",
        f"| nnsight's fixed cost per trace (an 8x8 linear layer) | {res['fixed_cost_ms']['traced']} ms | the call "
        f"{res['fixed_cost_ms']['plain']} ms | {res['fixed_cost_ms']['traced'] - res['fixed_cost_ms']['plain']:.2f} ms "
        "a trace | | |", "",
        f"The two grids agree to float32 rounding, not bit for bit: a matrix product over 162 rows sums in another "
        f"order than over one row (max abs diff {g['max_abs_diff']:.1e} on a clean-minus-corrupted gap of "
        f"{g['metric_gap']} logits). The per-cell timings are what a notebook loop of patched forwards costs; the "
        f"forward timings alternate plain and traced runs, so load from other processes hits both alike.", ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="alternating grid pairs (default 3)")
    parser.add_argument("--forward-repeats", type=int, default=30, help="alternating forward triples (default 30)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    args = parser.parse_args()
    loaded = load_model(resolve("gemma3-270m"), "causal-lm", device=args.device)
    res = {"overhead": overhead(loaded, args.forward_repeats), "fixed_cost_ms": fixed_cost(200),
           "grid": grids(loaded, args.repeats)}
    res["machine"] = machine(loaded)
    suffix = "" if args.device == "cpu" else f"-{args.device}"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"interventions{suffix}.json").write_text(json.dumps(res, indent=2) + "\n")
    (RESULTS / f"interventions{suffix}.md").write_text(markdown(res))
    print(markdown(res))


if __name__ == "__main__":
    main()
