"""Sentence-embedding throughput: explorer.tasks.similarity.encode vs SentenceTransformer.encode.

Same model (the bundled all-MiniLM-L6-v2), same process, same device and dtype (float32), same batch
size (sentences per forward), same thread count, same ~1,000 sentences of varied length; runs alternate
and the ratio is the median of back-to-back pairs (the machine is shared). Also checks the embeddings
are identical (max abs difference). Prints a table and writes benchmarks/results/similarity.json and
benchmarks/results/similarity.md (machine, versions, dtype, the table).

    python benchmarks/bench_similarity.py [--threads 2] [--batches 32,64,128] [--repeats 3] [--n 1000]
                                          [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

from explorer.runtime.resolve import resolve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import explorer  # noqa: E402,F401  (offline defaults before transformers is imported)


def make_sentences(n: int, seed: int = 0) -> list[str]:
    """n sentences with a long-tailed length distribution (3 to ~150 words), words from MiniLM's vocab.

    Real corpora mix short queries and long passages; that mix is what length sorting is for.
    """

    path = resolve("sentence-bert").path  # the bundled package, or a copy in EXPLORER_MODELS_DIR (a GPU machine)
    if path is None:
        raise SystemExit("all-MiniLM-L6-v2 is not here: `make install` brings it.")
    vocab = (Path(path) / "vocab.txt").read_text(encoding="utf-8").split("\n")
    words = [w for w in vocab if w.isalpha() and len(w) > 1 and not w.startswith("[")]
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        length = max(3, min(150, int(rng.lognormvariate(2.7, 0.8))))  # median ~15 words
        out.append(" ".join(rng.choice(words) for _ in range(length)).capitalize() + ".")
    return out


def padded_tokens(loaded, sentences: list[str], batch: int) -> dict:
    """Tokens each method pushes through the linear layers: sentence-transformers pads every batch to
    its longest sentence (sorted by characters); ours runs packed, so only the real tokens (its
    attention alone uses a padded grid, sorted by tokens: ``explorer_attention_grid``)."""
    ids = loaded.tokenizer(sentences, truncation=True, max_length=256)["input_ids"]

    def cost(order: list[int]) -> int:
        return sum(len(order[s : s + batch]) * max(len(ids[i]) for i in order[s : s + batch])
                   for s in range(0, len(order), batch))

    by_tokens = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
    by_chars = sorted(range(len(ids)), key=lambda i: -len(sentences[i]))
    unpadded = sum(len(x) for x in ids)
    return {"explorer": unpadded, "explorer_attention_grid": cost(by_tokens),
            "sentence_transformers": cost(by_chars), "unpadded": unpadded}


def _timed(fn) -> tuple[float, float, object]:
    """(wall seconds, process CPU seconds, result) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def _duel(ours, theirs, repeats: int) -> dict:
    """Run the two back to back ``repeats`` times, alternating which goes first.

    On a shared machine the load drifts from second to second; the ratio of two runs made back to
    back is much steadier than either time, so the reported ratio is the median of the paired ratios
    (wall and CPU time), and the throughput is each one's best run.
    """
    best = {"ours": float("inf"), "theirs": float("inf")}
    walls, cpus, out = [], [], {}
    for rep in range(repeats):
        pair = [("ours", ours), ("theirs", theirs)]
        times = {}
        for name, fn in pair if rep % 2 == 0 else pair[::-1]:
            wall, cpu, out[name] = _timed(fn)
            times[name] = (wall, cpu)
            best[name] = min(best[name], wall)
        walls.append(times["theirs"][0] / times["ours"][0])
        cpus.append(times["theirs"][1] / times["ours"][1])
    return {"best": best, "ratio": statistics.median(walls), "cpu_ratio": statistics.median(cpus),
            "ratios": walls, "ours": out["ours"], "theirs": out["theirs"]}


def run(threads: int, batches: list[int], repeats: int, n: int, device: str = "cpu") -> dict:
    import torch
    from sentence_transformers import SentenceTransformer

    from explorer.runtime.loading import load_model
    from explorer.tasks import similarity

    torch.set_num_threads(threads)
    loaded = load_model(resolve("sentence-bert"), device=device)
    st_model = SentenceTransformer(loaded.path, device=loaded.device)
    sentences = make_sentences(n)
    similarity.encode(loaded, sentences[:64])  # warm-up both (first calls allocate)
    st_model.encode(sentences[:64], convert_to_tensor=True)
    rows = []
    for batch in batches:
        duel = _duel(lambda b=batch: similarity.encode(loaded, sentences, batch_size=b),
                     lambda b=batch: st_model.encode(sentences, batch_size=b, convert_to_tensor=True), repeats)
        ours_s, st_s = duel["best"]["ours"], duel["best"]["theirs"]
        rows.append({"batch": batch, "threads": threads, "sentences": n,
                     "explorer_per_s": round(n / ours_s, 1), "sentence_transformers_per_s": round(n / st_s, 1),
                     "ratio": round(duel["ratio"], 3), "cpu_time_ratio": round(duel["cpu_ratio"], 3),
                     "paired_ratios": [round(r, 3) for r in duel["ratios"]],
                     "padded_tokens": padded_tokens(loaded, sentences, batch),
                     "max_abs_diff": float((duel["ours"] - duel["theirs"].cpu()).abs().max())})
    return {"model": "all-MiniLM-L6-v2 (bundled)", "repeats": repeats, "rows": rows, "machine": machine(loaded)}


def machine(loaded) -> dict:
    """What the figures were measured on: they mean nothing without it."""
    import platform

    import sentence_transformers
    import torch
    import transformers

    gpu = torch.cuda.get_device_name(0) if loaded.device.startswith("cuda") else None
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    return {"device": loaded.device, "gpu": gpu, "cpu": cpu, "cores": __import__("os").cpu_count(),
            "threads": torch.get_num_threads(), "dtype": loaded.dtype, "torch": torch.__version__,
            "transformers": transformers.__version__, "sentence_transformers": sentence_transformers.__version__,
            "load_average": list(__import__("os").getloadavg())}


def markdown(res: dict) -> str:
    """benchmarks/results/similarity.md: the machine, then one row per batch size."""
    m = res["machine"]
    lines = ["# Similarity: explorer.tasks.similarity.encode vs SentenceTransformer.encode", "",
             f"Device {m['device']} ({m['gpu'] or m['cpu']}, {m['cores']} cores, {m['threads']} torch threads), "
             f"dtype {m['dtype']}, torch {m['torch']}, transformers {m['transformers']}, "
             f"sentence-transformers {m['sentence_transformers']}; {res['rows'][0]['sentences']} sentences, "
             f"{res['repeats']} alternating repeats; load average at the end {m['load_average'][0]:.1f}.", "",
             "Noisy machine: a shared CPU moves wall times by 2x from run to run; the ratio is the median of "
             "back-to-back pairs, and the CPU-time ratio (process CPU seconds) is the steadier figure.", "",
             "| batch | explorer sent/s | ST sent/s | wall ratio | CPU-time ratio | paired ratios | max abs diff |",
             "|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        lines.append(f"| {r['batch']} | {r['explorer_per_s']} | {r['sentence_transformers_per_s']} | "
                     f"{r['ratio']:.2f}x | {r['cpu_time_ratio']:.2f}x | {r['paired_ratios']} | "
                     f"{r['max_abs_diff']:.1e} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", default="32,64,128")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (both libraries on it)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args()
    res = run(args.threads, [int(b) for b in args.batches.split(",")], args.repeats, args.n, args.device)
    print(f"{'batch':>5} {'threads':>7} {'explorer/s':>11} {'ST/s':>8} {'ratio':>6} {'cpu ratio':>9} {'max|diff|':>10}")
    for r in res["rows"]:
        print(f"{r['batch']:>5} {r['threads']:>7} {r['explorer_per_s']:>11.1f} "
              f"{r['sentence_transformers_per_s']:>8.1f} {r['ratio']:>6.3f} {r['cpu_time_ratio']:>9.3f} "
              f"{r['max_abs_diff']:>10.2e}")
    out = ROOT / "benchmarks" / "results" / f"similarity{'' if args.device == 'cpu' else '-' + args.device}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2))
    (out.parent / f"similarity{'' if args.device == 'cpu' else '-' + args.device}.md").write_text(markdown(res))
    for r in res["rows"]:
        pad = r["padded_tokens"]
        print(f"batch {r['batch']}: tokens through the linear layers: explorer {pad['explorer']:,} "
              f"vs ST {pad['sentence_transformers']:,} (unpadded {pad['unpadded']:,}); "
              f"paired ratios {r['paired_ratios']}")
    print("ratio = median over back-to-back pairs of ST seconds / explorer seconds (>= 1.0: explorer at least "
          f"as fast); cpu ratio = the same with process CPU time. Written to {out}")


if __name__ == "__main__":
    main()
