"""CLI of the compression lab: a model through compression methods, measured beside the original.

    python -m explorer compress sentence-bert --method int8 --method prune-50 [--device cpu] [--json]
    python -m explorer compress lab/NAME --method exit-0.2 --method exit-0.5   # FastBERT early exit (pretrain --exits)

JSON: one object per method, ``{model, method, size_bytes, baseline_size_bytes, latency_ms,
baseline_latency_ms, quality: {metric, value, baseline_value, ...}, device, ...}``; a list when several
methods are given.

Progress goes to stderr: a line as each method starts (``NN% METHOD: ... (method i/n)``, elapsed time and time
left) and, while one runs (a quantised copy's perplexity can take minutes), the same line again at least every
few seconds (:mod:`explorer.cli.progress`). Ctrl-C stops it with exit code 130, saying how far it got; nothing is
written anywhere but the terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from explorer.cli import add_placement, placement_of, print_json
from explorer.cli.argtypes import number
from explorer.cli.progress import Ticker, eta
from explorer.compression import offer
from explorer.core.errors import ExplorerError

__all__ = ["cmd_compress", "register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""
    p = sub.add_parser("compress", help="quantize or prune a copy of a model and measure size, speed and quality "
                                        "beside the original")
    p.add_argument("model", metavar="KEY", help="catalog key or save_pretrained directory, e.g. sentence-bert, "
                                                "gemma3-270m")
    p.add_argument("--method", action="append", required=True, metavar="M", help=offer.help_text())
    p.add_argument("--repeats", type=number(int, 1, 100), default=5, help="timed runs per model (median)")
    p.add_argument("--models-dir", default=None, help="where to look for weights (default: EXPLORER_MODELS_DIR)")
    p.add_argument("--json", action="store_true", help="print the measurements as JSON")
    add_placement(p)
    p.set_defaults(func=cmd_compress)


_SHOWN = ("metric", "value", "baseline_value", "probes_kept", "probes_total")


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def _times(ratio: float | None) -> str:
    """A ratio to the original in the table's 7 columns; "n/a" where the original's figure gives none."""
    return f"{ratio:>7.2f}" if ratio is not None else f"{'n/a':>7}"


def _value(value: float | None) -> str:
    """A quality figure; "n/a" where it is not finite (a perplexity that overflowed is null in the JSON)."""
    return f"{value:.4f}" if value is not None else "n/a"


def _reporter(ticker: Ticker, methods: int) -> Callable[[float, str], None]:
    """The study's ``(fraction, text)`` progress as lines: percent, what runs, which method of how many, times."""
    started = [0]

    def report(fraction: float, text: str) -> None:
        if text.endswith(("compressing a copy and measuring it…", "adaptive inference, timed beside the full model…")):
            started[0] += 1  # the study says "METHOD: ..." as each method starts
        count = f" (method {started[0]}/{methods})" if started[0] and text != "Done." else ""

        def line(elapsed: float, again: str = "") -> str:
            return (f"{fraction:4.0%} {again}{text.rstrip('…')}{count}  elapsed {elapsed:.0f} s  "
                    f"ETA {eta(elapsed, fraction)}")
        ticker.status = lambda elapsed: line(elapsed, "still: ")
        ticker.say(line(ticker.elapsed))
    return report


def cmd_compress(args: argparse.Namespace) -> int:
    """Run the study and print one record per method."""
    from explorer.compression import methods, study

    for name in args.method:  # bad names fail before torch or a model loads anything
        methods.parse(name)
    chosen = placement_of(args)
    if chosen.dtype not in ("auto", "float32"):
        raise ExplorerError(f"--dtype {chosen.dtype}: the original is measured in float32; ask for the cast as a "
                            "method instead (--method bf16 or --method fp16).")
    with Ticker() as ticker:
        try:
            result = study.run(args.model, list(args.method), device=chosen.device, models_dir=args.models_dir,
                               repeats=args.repeats, progress=_reporter(ticker, len(args.method)))
        except KeyboardInterrupt:
            print("error: interrupted (Ctrl-C) before every method was measured; nothing was printed or written. "
                  "Run fewer methods (--method) to get results sooner.", file=sys.stderr)
            return 130
        ticker.status = None
    records = result.records()
    if args.json:
        print_json(records[0] if len(records) == 1 else records)
        return 0
    print(f"{result.name} on {result.device_name}: original {_mb(result.baseline.size_bytes)} on disk")
    for note in result.notices:
        print(f"note: {note}")
    print(f"{'method':<10} {'size':>10} {'x size':>7} {'latency':>10} {'x time':>7}  quality")
    for r, ratios in zip(records, result.ratios, strict=True):
        q = r["quality"]
        extra = ", ".join(f"{k.replace('_', ' ')} {v:.3g}" for k, v in q.items() if k not in _SHOWN and v is not None)
        kept = f", probes kept {q['probes_kept']}/{q['probes_total']}" if q["probes_total"] else ""
        print(f"{r['method']:<10} {_mb(r['size_bytes']):>10} {_times(ratios.size)} "
              f"{r['latency_ms']:>8.1f}ms {_times(ratios.latency)}  "
              f"{q['metric']} {_value(q['value'])} (original {_value(q['baseline_value'])}){kept}"
              + (f"; {extra}" if extra else ""))
    return 0
