"""CLI commands of the results area: ``results`` (published benchmark figures) and ``speed``."""

from __future__ import annotations

import argparse

from explorer import speed
from explorer.cli import print_json
from explorer.cli.argtypes import number


def register(sub: argparse._SubParsersAction) -> None:
    """Add results / speed."""
    p = sub.add_parser("results", help="published benchmark results, one row per model and metric")
    p.add_argument("--benchmark", help="only this benchmark (e.g. glue-test)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_results)
    p = sub.add_parser("speed", help="ms per example of two variants on this CPU (random weights, batch 1)")
    p.add_argument("keys", nargs="+", help="two catalog keys, e.g. bert-base distilbert")
    p.add_argument("--seq-len", type=number(int, 1, speed.MAX_SEQ_LEN), default=speed.DEFAULT_SEQ_LEN,
                   help="tokens per example")
    p.add_argument("--runs", type=number(int, 1, speed.MAX_RUNS), default=20, help="interleaved timed rounds")
    p.add_argument("--threads", type=number(int, 1, speed.MAX_THREADS), default=1,
                   help="torch CPU threads while timing")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_speed)


def cmd_results(args: argparse.Namespace) -> int:
    from explorer import results

    rows = results.rows(args.benchmark)
    if args.json:
        print_json([r.to_dict() for r in rows])
        return 0
    for r in rows:
        value = results.NOT_REPORTED if r.value is None else f"{r.value:g}"
        print(f"{r.benchmark:<24} {r.model[:40]:<40} {r.metric:<22} {value:>12}  {r.source}")
    return 0


def cmd_speed(args: argparse.Namespace) -> int:
    result = speed.measure(args.keys, seq_len=args.seq_len, runs=args.runs, threads=args.threads)
    if args.json:
        print_json(result.to_dict())
        return 0
    for key, ms in zip(result.keys, result.ms_per_example, strict=True):
        print(f"{key:<28} {ms:10.1f} ms per example")
    print(f"ratio {result.keys[0]} / {result.keys[1]}: {result.ratio:.2f} (random weights time as trained ones)")
    return 0
