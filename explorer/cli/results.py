"""CLI commands of the results area: ``results`` (published benchmark figures), ``budget`` (what each
variant cost to pretrain) and ``speed``."""

from __future__ import annotations

import argparse

from explorer.architecture import budgets
from explorer.cli import add_placement, placement_of, print_json
from explorer.cli.argtypes import number
from explorer.papers import results, speed


def register(sub: argparse._SubParsersAction) -> None:
    """Add results / speed."""
    p = sub.add_parser("results", help="published benchmark results, one row per model and metric")
    p.add_argument("--benchmark", help="only this benchmark (e.g. glue-test)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_results)
    p = sub.add_parser("budget", help="pretraining budgets: corpus, tokens, steps x batch, hardware, training FLOPs")
    p.add_argument("keys", nargs="*", help="catalog keys (default: every variant with a recorded budget)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_budget)
    p = sub.add_parser("speed", help="ms per example of two variants on this machine (random weights, batch 1)")
    p.add_argument("keys", nargs="+", help="two catalog keys, e.g. bert-base distilbert")
    p.add_argument("--seq-len", type=number(int, 1, speed.MAX_SEQ_LEN), default=speed.DEFAULT_SEQ_LEN,
                   help="tokens per example")
    p.add_argument("--runs", type=number(int, 1, speed.MAX_RUNS), default=20, help="interleaved timed rounds")
    p.add_argument("--threads", type=number(int, 1, speed.MAX_THREADS), default=1,
                   help="torch CPU threads while timing")
    add_placement(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_speed)


def cmd_results(args: argparse.Namespace) -> int:
    rows = results.rows(args.benchmark)
    if args.json:
        print_json([r.to_dict() for r in rows])
        return 0
    for r in rows:
        value = results.NOT_REPORTED if r.value is None else f"{r.value:g}"
        print(f"{r.benchmark:<24} {r.model[:40]:<40} {r.metric:<22} {value:>12}  {r.source}")
    return 0


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def cmd_budget(args: argparse.Namespace) -> int:
    found = budgets.budgets(args.keys)
    if args.json:
        print_json([b.to_dict() for b in found])
        return 0
    for b in found:
        print(f"{b.key:<28} tokens {_fmt(b.tokens):>9}  train FLOPs {_fmt(b.train_flops):>9}  "
              f"{_fmt(b.hardware)[:40]:<40} {_fmt(b.days)} days")
        print(f"{'':<28} {b.train_flops_source or budgets.NOT_RECORDED}; source: {b.source}")
    return 0


def cmd_speed(args: argparse.Namespace) -> int:
    from explorer.runtime.placement import caption

    result = speed.measure(args.keys, seq_len=args.seq_len, runs=args.runs, threads=args.threads,
                           **placement_of(args).kwargs())
    if args.json:
        print_json(result.to_dict())
        return 0
    for key, ms in zip(result.keys, result.ms_per_example, strict=True):
        print(f"{key:<28} {ms:10.1f} ms per example")
    print(f"ratio {result.keys[0]} / {result.keys[1]}: {result.ratio:.2f} (random weights time as trained ones)")
    print(f"ran on {caption(result.device_name, result.dtype)}")
    return 0
