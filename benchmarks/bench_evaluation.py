"""Evaluation and the projector against what a user would otherwise run, ratios in one run.

1. Multiple choice on the bundled Gemma 3 270M (float32, CPU): the bundled 26-question task scored by
   ``explorer.evaluation`` (one sequence per example, its choices branching off its context run once, only the
   scored positions projected) against lm-evaluation-harness 0.4's ``hf`` model on the same requests, same batch
   size (sequences per forward: lm-eval's are (context, choice) pairs, ours whole examples), same converted weights.
   Target: at least 1.5x, and the same choices. Also end to end: ``lm_eval.simple_evaluate`` on the same JSONL as a
   local task against our ``run.score_task``.
2. Through the engine (llama-cpp-python serving the bundled GGUF on 127.0.0.1): our served scorer against lm-eval's
   ``local-completions`` on the same file (a few examples: the engine's echo costs about half a second a token on
   2 cores). Target: at least 1.0x.
3. The projector: UMAP and t-SNE of 2,000 MiniLM sentence embeddings (sentences of the bundled Python-docs corpus),
   with progress, against the request budget of this machine, and against umap-learn and scikit-learn's t-SNE run
   as a user would (default settings, a fresh process: umap-learn compiles its numba functions every time).

Runs alternate (which goes first flips each repeat); each ratio is the median of back-to-back pairs (the machine is
shared). Writes benchmarks/results/evaluation.json and evaluation.md.

    python benchmarks/bench_evaluation.py [--repeats 3] [--batch 8] [--served-examples 3] [--skip-engine]
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from explorer.runtime.resolve import resolve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import explorer  # noqa: E402,F401  (offline defaults)

OUT = ROOT / "benchmarks" / "results"
SENTENCES = 2_000


def paired(ours: Callable[[], object], theirs: Callable[[], object], repeats: int) -> dict:
    """Wall and this process's CPU seconds of each (alternating which goes first) and the medians of the per-pair
    ratios theirs / ours (CPU time is steadier on a shared machine; a served run's work is the engine's)."""
    times: dict[str, list[float]] = {"ours": [], "theirs": []}
    cpu: dict[str, list[float]] = {"ours": [], "theirs": []}
    results: dict[str, object] = {}
    for r in range(repeats):
        order = [("ours", ours), ("theirs", theirs)] if r % 2 == 0 else [("theirs", theirs), ("ours", ours)]
        for name, fn in order:
            began, began_cpu = time.perf_counter(), time.process_time()
            results[name] = fn()
            times[name].append(time.perf_counter() - began)
            cpu[name].append(time.process_time() - began_cpu)
    speedups = [t / o for o, t in zip(times["ours"], times["theirs"], strict=True)]
    cpu_speedups = [t / max(o, 1e-9) for o, t in zip(cpu["ours"], cpu["theirs"], strict=True)]
    return {"ours_s": statistics.median(times["ours"]), "theirs_s": statistics.median(times["theirs"]),
            "ours_all": [round(t, 3) for t in times["ours"]], "theirs_all": [round(t, 3) for t in times["theirs"]],
            "ours_cpu_all": [round(t, 3) for t in cpu["ours"]], "theirs_cpu_all": [round(t, 3) for t in cpu["theirs"]],
            "speedup": statistics.median(speedups), "speedups": [round(s, 3) for s in speedups],
            "cpu_speedup": statistics.median(cpu_speedups), "results": results}


def _lm_eval_requests(task) -> list:
    from lm_eval.api.instance import Instance

    return [Instance("loglikelihood", {}, (ex.context, cont), k) for ex in task.examples
            for k, cont in enumerate(ex.continuations())]


def _choices_of(lls: list[float], task) -> list[int]:
    out, at = [], 0
    for ex in task.examples:
        scores = lls[at:at + len(ex.choices)]
        out.append(max(range(len(scores)), key=scores.__getitem__))
        at += len(ex.choices)
    return out


def bench_local(repeats: int, batch: int) -> dict:
    """Part 1: the bundled task on the bundled Gemma, ours against lm-eval's hf model."""
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from explorer.evaluation import bundled, lmeval, run
    from explorer.evaluation.decoder import DecoderScorer
    from explorer.runtime import bundled as runtime_bundled
    from explorer.runtime.loading import load_model

    task = bundled.task("multiple_choice")
    gemma = load_model(resolve("gemma3-270m"), "causal-lm", device="cpu", dtype="float32")
    scorer = DecoderScorer(gemma, examples=batch)
    run.score_task(scorer, task.head(batch))  # the one-time check of the branched path (once per model)
    lm = HFLM(pretrained=str(runtime_bundled.converted_dir()), device="cpu", batch_size=batch, dtype="float32")
    requests = _lm_eval_requests(task)
    core = paired(lambda: run.score_task(scorer, task),
                  lambda: [r[0] for r in lm.loglikelihood(requests, disable_tqdm=True)], repeats)
    last = core.pop("results")
    ours, theirs = last["ours"], last["theirs"]
    same = [ours.choice(i) for i in range(len(task.examples))] == _choices_of(theirs, task)
    gap = max(abs(a - b) for a, b in zip([s for e in ours.examples for s in e.scores], theirs, strict=True))
    folder = OUT.parent / ".lm_eval_tasks"
    lmeval.write_task(folder, "explorer_bench_mc", "choice", bundled.path("multiple_choice"))
    manager = TaskManager(include_path=str(folder))
    e2e = paired(lambda: run.score_task(scorer, bundled.task("multiple_choice")),
                 lambda: lm_eval.simple_evaluate(model=lm, tasks=["explorer_bench_mc"], task_manager=manager,
                                                 verbosity="ERROR"), max(1, repeats - 1))
    acc_theirs = e2e.pop("results")["theirs"]["results"]["explorer_bench_mc"]["acc,none"]
    return {"examples": len(task.examples), "requests": len(requests), "batch": batch, "core": core,
            "end_to_end": e2e, "same_choices": same, "largest_score_gap": gap,
            "accuracy_ours": sum(bool(ours.correct(i, ex.answer)) for i, ex in enumerate(task.examples)) / 26,
            "accuracy_lm_eval": acc_theirs}


def bench_served(repeats: int, examples: int) -> dict:
    """Part 2: a few bundled questions through the engine, ours against lm-eval's local-completions."""
    import lm_eval
    from lm_eval.tasks import TaskManager

    from explorer.evaluation import bundled, lmeval, run
    from explorer.evaluation.served import served_scorer
    from explorer.runtime import bundled as runtime_bundled
    from explorer.serving import localengine

    task = bundled.task("multiple_choice").head(examples)
    data = OUT.parent / ".lm_eval_tasks" / "served_mc.jsonl"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text("".join(bundled.path("multiple_choice").read_text(encoding="utf-8")
                            .splitlines(keepends=True)[:examples]), encoding="utf-8")
    lmeval.write_task(data.parent, "explorer_bench_served", "choice", data)
    manager = TaskManager(include_path=str(data.parent))
    with localengine.running(name="bench-eval") as engine:
        ep = engine.endpoint
        args = (f"model={ep.model},base_url={ep.base_url}/completions,tokenizer_backend=huggingface,"
                f"tokenizer={runtime_bundled.converted_dir()},tokenized_requests=False,num_concurrent=1")
        scorer = served_scorer(ep)
        result = paired(lambda: run.score_task(scorer, task),
                        lambda: lm_eval.simple_evaluate(model="local-completions", model_args=args,
                                                        tasks=["explorer_bench_served"], task_manager=manager,
                                                        log_samples=True, verbosity="ERROR"), repeats)
    got = result.pop("results")
    ours, theirs = got["ours"], got["theirs"]
    samples = sorted(theirs["samples"]["explorer_bench_served"], key=lambda s: s["doc_id"])
    lm_choices = [max(range(len(s["filtered_resps"])), key=lambda k, s=s: s["filtered_resps"][k][0])
                  for s in samples]
    return {"examples": examples, "requests": task.pairs, **result,
            "same_choices": lm_choices == [ours.choice(i) for i in range(examples)]}


def _sentences(n: int) -> list[str]:
    """``n`` distinct sentences of 40-200 characters from the bundled Python-docs corpus, in file order."""
    with lzma.open(ROOT / "assets" / "corpus" / "python-docs.txt.xz", "rt", encoding="utf-8") as fh:
        text = fh.read()
    seen: dict[str, None] = {}
    for line in text.splitlines():
        if line.startswith("###"):
            continue
        for s in re.split(r"(?<=[.!?])\s+", line):
            if 40 <= len(s) <= 200 and s not in seen:
                seen[s] = None
                if len(seen) == n:
                    return list(seen)
    return list(seen)


_THEIRS = """
import json, sys, time, numpy as np
x = np.load(sys.argv[1])
began = time.perf_counter()
if sys.argv[2] == "umap":
    import umap
    umap.UMAP(n_components=2, random_state=0).fit_transform(x)
else:
    from sklearn.manifold import TSNE
    TSNE(2, random_state=0).fit_transform(x)
print(json.dumps({"seconds": time.perf_counter() - began}))
"""

_OURS = """
import json, sys, time, numpy as np
sys.path.insert(0, sys.argv[3])
from explorer.evaluation import projection
x = np.load(sys.argv[1])
began = time.perf_counter()
projection.project(x, sys.argv[2], 2, seed=0, progress=lambda f, what: print(what, file=sys.stderr, flush=True))
print(json.dumps({"seconds": time.perf_counter() - began}))
"""


def _process(code: str, matrix: Path, method: str) -> float:
    """Seconds of one layout in a fresh process (imports and numba's compiling included, as a user meets them)."""
    out = subprocess.run([sys.executable, "-c", code, str(matrix), method, str(ROOT)], capture_output=True,
                         text=True, check=True)
    for line in out.stderr.splitlines():
        if "of " in line and "points" in line:
            print(f"    progress: {line}", flush=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])


def bench_projector(repeats: int) -> dict:
    """Part 3: 2,000 MiniLM sentences embedded (with progress) and laid out by UMAP and t-SNE."""
    import numpy as np

    from explorer.evaluation import projection, vectors
    from explorer.runtime import cancel
    from explorer.runtime.loading import load_model

    texts = _sentences(SENTENCES)
    minilm = load_model(resolve("sentence-bert"), device="cpu")
    began = time.perf_counter()
    vec = vectors.sentences(minilm, texts, progress=lambda f, what: print(f"    {what}", flush=True) if f in (
        0.0, 1.0) else None)
    embed_s = time.perf_counter() - began
    matrix = OUT.parent / ".lm_eval_tasks" / "minilm-2000.npy"
    np.save(matrix, vec.matrix)
    budget = cancel.request_budget().seconds
    rows = {}
    for method in ("umap", "tsne"):
        projection.project(vec.matrix[:50], method, 2)  # this process: compiled / imported once
        in_process = [_timed(lambda m=method: projection.project(vec.matrix, m, 2, seed=0)) for _ in range(repeats)]
        fresh = paired(lambda m=method: _process(_OURS, matrix, m), lambda m=method: _process(_THEIRS, matrix, m),
                       repeats)
        fresh.pop("results")
        rows[method] = {"in_process_s": statistics.median(in_process), "fresh_process": fresh,
                        "within_budget": embed_s + statistics.median(in_process) <= budget}
    return {"sentences": len(texts), "embed_s": embed_s, "budget_s": budget, **rows}


def _timed(fn: Callable[[], object]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def _machine() -> dict:
    import lm_eval
    import numba
    import sklearn
    import torch
    import transformers
    import umap

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__,
            "transformers": transformers.__version__, "lm_eval": lm_eval.__version__, "sklearn": sklearn.__version__,
            "umap": umap.__version__, "numba": numba.__version__, "dtype": "float32", "device": "cpu",
            "threads": torch.get_num_threads(), "load_average": os.getloadavg()}


def _ratio_row(name: str, r: dict, target: float, extra: str = "") -> str:
    met = "met" if r["speedup"] >= target else "NOT met"
    return (f"| {name} | {r['ours_s']:.2f} s | {r['theirs_s']:.2f} s | {r['speedup']:.2f}x "
            f"({', '.join(f'{s:.2f}' for s in r['speedups'])}; CPU time {r['cpu_speedup']:.2f}x) | >= {target}x: "
            f"{met}{extra} |")


def report(results: dict) -> str:
    m = results["machine"]
    lines = ["# Evaluation and the projector, against what a user would otherwise run", "",
             f"Machine: {m['cpu']}, {m['cores']} cores ({m['threads']} torch threads), Python {m['python']}, "
             f"torch {m['torch']}, transformers {m['transformers']}, lm-eval {m['lm_eval']}, scikit-learn "
             f"{m['sklearn']}, umap-learn {m['umap']}, numba {m['numba']}; {m['dtype']} on the {m['device']}; load "
             f"average {m['load_average'][0]:.1f} at the start, {results['load_end'][0]:.1f} at the end (a shared "
             "machine: each ratio is the median of back-to-back pairs, their spread in brackets).", "",
             "| measurement | ours | theirs | speedup (pairs) | target |", "|---|---|---|---|---|"]
    loc = results.get("local")
    if loc:
        lines.append(_ratio_row(f"{loc['examples']} questions ({loc['requests']} choices), Gemma 3 270M, batch "
                                f"{loc['batch']}: run.score_task vs lm-eval hf loglikelihood", loc["core"], 1.5,
                                f"; same choices: {loc['same_choices']}, largest score gap "
                                f"{loc['largest_score_gap']:.1e}"))
        lines.append(_ratio_row("same, end to end: vs lm_eval.simple_evaluate on the JSONL as a local task",
                                loc["end_to_end"], 1.5, f"; accuracy {loc['accuracy_ours']:.3f} (ours), "
                                f"{loc['accuracy_lm_eval']:.3f} (lm-eval)"))
    srv = results.get("served")
    if srv:
        lines.append(_ratio_row(f"{srv['examples']} questions ({srv['requests']} echo requests) through "
                                "llama-cpp-python: served scorer vs lm-eval local-completions", srv, 1.0,
                                f"; same choices: {srv['same_choices']}"))
    proj = results.get("projector")
    if proj:
        for method, label in (("umap", "UMAP"), ("tsne", "t-SNE")):
            row = proj[method]
            lines.append(_ratio_row(f"{label} of {proj['sentences']:,} MiniLM sentences, a fresh process (imports "
                                    "and compiling included): ours vs the library's defaults",
                                    row["fresh_process"], 1.0))
        lines += ["", f"Within one request's budget ({proj['budget_s']:.0f} s on this machine): embedding "
                  f"{proj['sentences']:,} sentences took {proj['embed_s']:.1f} s; then UMAP "
                  f"{proj['umap']['in_process_s']:.1f} s, t-SNE {proj['tsne']['in_process_s']:.1f} s in the "
                  f"server's process (within the budget: UMAP {proj['umap']['within_budget']}, t-SNE "
                  f"{proj['tsne']['within_budget']})."]
        if "machine" in proj:
            pm = proj["machine"]
            lines[-1] += (f" Measured again in a run of its own (`--only projector`), load average "
                          f"{pm['load_average'][0]:.1f} at its start and {proj['load_end'][0]:.1f} at its end. The "
                          "page embeds 128 texts a request and stops at the budget, saying how many are left; "
                          "running it again continues from the parts cached.")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--served-examples", type=int, default=3)
    parser.add_argument("--skip-engine", action="store_true", help="no engine here: parts 1 and 3 only")
    parser.add_argument("--only", choices=("local", "served", "projector"), default=None)
    args = parser.parse_args()
    results: dict = {"machine": _machine()}
    if args.only in (None, "local"):
        print("== multiple choice on the bundled Gemma: ours vs lm-eval hf", flush=True)
        results["local"] = bench_local(args.repeats, args.batch)
        print(json.dumps({k: v for k, v in results["local"].items() if k not in ("core", "end_to_end")}), flush=True)
    if args.only in (None, "served") and not args.skip_engine:
        print("== through the engine: ours vs lm-eval local-completions", flush=True)
        results["served"] = bench_served(max(1, args.repeats - 1), args.served_examples)
    if args.only in (None, "projector"):
        print("== projector: UMAP and t-SNE of 2,000 MiniLM sentences", flush=True)
        results["projector"] = bench_projector(args.repeats)
    results["load_end"] = os.getloadavg()
    OUT.mkdir(exist_ok=True)
    suffix = ""
    if args.only and (OUT / "evaluation.json").exists():  # one part measured again: the others kept
        kept = json.loads((OUT / "evaluation.json").read_text(encoding="utf-8"))
        kept[args.only] = {**results[args.only], "machine": results["machine"], "load_end": results["load_end"]}
        results = kept
    elif args.only:
        suffix = f"-{args.only}"
    (OUT / f"evaluation{suffix}.json").write_text(json.dumps(results, indent=2, default=str) + "\n",
                                                  encoding="utf-8")
    (OUT / f"evaluation{suffix}.md").write_text(report(results), encoding="utf-8")
    print(report(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
