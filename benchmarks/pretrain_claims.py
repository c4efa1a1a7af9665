"""The papers' claims against the pretraining lab's measurements (explorer.papers.claims).

Trains every objective a claim needs on the same budget (ELECTRA on BERT MLM's training FLOPs),
fine-tunes each on the swapped-word probe (explorer.training.downstream), times the DistilBERT student
against its teacher, and writes benchmarks/results/pretraining_claims.json and .md. Objectives
whose loss family is not in this build are reported as "not measured", not skipped silently.

    python benchmarks/pretrain_claims.py [--steps 150] [--seed 0] [--threads 1] [--device cpu] [--note "..."]

One torch thread by default: on a machine shared with other processes two OpenMP threads spin at
every barrier and a run takes several times longer (explorer.papers.speed says the same).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import explorer  # noqa: E402,F401  (offline defaults before transformers is imported)
from explorer.papers import claims  # noqa: E402
from explorer.training.downstream import ProbeSpec  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150, help="training steps per objective")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--note", default="", help="the machine's state, e.g. 'shared by 8 agents'")
    parser.add_argument("--probe-steps", type=int, default=ProbeSpec.steps,
                        help="smoke runs only: the table's probe is fixed")
    parser.add_argument("--out", type=Path, default=claims.RESULTS_JSON)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    start = time.perf_counter()

    def say(text: str) -> None:
        print(f"[{time.perf_counter() - start:6.0f} s] {text}", file=sys.stderr, flush=True)

    measurement = claims.measure(args.steps, args.seed, say, device=args.device, machine=args.note,
                                 spec=ProbeSpec(steps=args.probe_steps))
    rep = claims.report(measurement)
    json_path, md_path = claims.write(rep, args.out)
    for row in rep.rows:
        print(f"{row.key:11s} {row.verdict:28s} {row.measured}")
    print(f"wrote {json_path.name} and {md_path.name} in {json_path.parent}")


if __name__ == "__main__":
    main()
