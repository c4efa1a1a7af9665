"""CLI commands of the architecture area: ``list``, ``inspect``, ``compare``."""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.architecture import catalog, census, compare
from explorer.cli import print_json
from explorer.cli.argtypes import number
from explorer.core import userfiles
from explorer.core.errors import ExplorerError, shorten

if TYPE_CHECKING:
    from explorer.architecture import analysis

# The library is imported inside each command: torch/transformers cost seconds to import,
# and `python -m explorer mask ...` should not pay for them.


__all__ = ["MAX_SEQ_LEN", "register", "cmd_list", "cmd_inspect", "cmd_compare", "text_table", "write_csv"]

MAX_SEQ_LEN = 1_000_000  # shapes and FLOPs are closed-form: a long length costs nothing, but 10**20 means a typo


def register(sub: argparse._SubParsersAction) -> None:
    """Add list / inspect / compare."""
    p = sub.add_parser("list", help="every variant in the catalog")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("inspect", help="layer tree and parameter breakdown of a variant or config.json")
    p.add_argument("target", help="catalog key or path to a config.json")
    p.add_argument("--seq-len", type=number(int, 1, MAX_SEQ_LEN), default=128,
                   help="sequence length for shapes and FLOPs")
    p.add_argument("--share-layers", action="store_true", help="ALBERT-style cross-layer sharing")
    p.add_argument("--depth", type=number(int, 0, 64), default=4, help="depth of the text tree")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_inspect)
    p = sub.add_parser("compare", help="side-by-side table of several variants")
    p.add_argument("keys", nargs="+", help="catalog keys")
    p.add_argument("--seq-len", type=number(int, 1, MAX_SEQ_LEN), default=512)
    p.add_argument("--csv", action="store_true", help="CSV instead of a text table")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_compare)


def cmd_list(args: argparse.Namespace) -> int:
    rows = []
    counts = census.catalog_params()
    for v in catalog.load_catalog().values():
        params = counts[v.key]
        rows.append({"key": v.key, "name": v.name, "family": v.family, "year": v.year,
                     "reference_checkpoint": v.reference_checkpoint, "model_type": v.model_type,
                     "params": params, "objectives": list(v.objectives), "attention": v.attention})
    if args.json:
        print_json(rows)
    else:
        for r in rows:
            print(f"{r['key']:<28} {r['name']:<30} {r['family']:<16} {r['params']:>15,}")
    return 0


def _analyse(target: str, seq_len: int, share: bool) -> analysis.Analysis:
    from explorer.architecture import analysis, build

    if seq_len < 1 or seq_len > MAX_SEQ_LEN:
        raise ExplorerError(f"--seq-len must be between 1 and {MAX_SEQ_LEN:,} (got {seq_len}).")
    path = Path(target)
    try:
        is_file = path.is_file()
    except (OSError, ValueError):  # a name too long for a path, or a NUL byte: it can only be a (bad) key
        is_file = False
    if target.endswith(".json") or is_file:
        if not is_file:
            raise ExplorerError(f"No such file: {shorten(target)}. Give a catalog key or the path of a config.json.")
        data = userfiles.read_path(path, userfiles.MAX_CONFIG_BYTES, "That config.json")  # size checked before reading
        config = build.parse_config_json(data)
        return analysis.analyse_config(config, name=path.stem, seq_len=seq_len, share_layers=share)
    return analysis.analyse_variant(target, seq_len=seq_len, share_layers=share)


def cmd_inspect(args: argparse.Namespace) -> int:
    result = _analyse(args.target, args.seq_len, args.share_layers)
    if args.json:
        print_json(result.to_dict())
        return 0
    from explorer.architecture.treetable import text_tree

    print(text_tree(result.tree, args.depth))
    for category, n in result.components.items():
        print(f"{category:<26} {n:>15,}")
    return 0


def _cell(value: object) -> str:
    return "" if value is None else str(value)


def text_table(rows: list[dict[str, object]]) -> str:
    """Rows as a right-aligned text table, without importing pandas (a second of a warm ``compare``).

    >>> print(text_table([{"key": "gpt2", "params": 124439808}, {"key": "t5-small", "params": None}]))
         key    params
        gpt2 124439808
    t5-small
    """
    columns = list(rows[0])
    cells = [[_cell(r[c]) for c in columns] for r in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(columns)]
    lines = [columns, *cells]
    return "\n".join(" ".join(v.rjust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in lines)


def write_csv(rows: list[dict[str, object]]) -> None:
    """Rows as CSV on standard output (header first; no pandas import)."""
    writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def cmd_compare(args: argparse.Namespace) -> int:
    result = compare.compare(args.keys, seq_len=args.seq_len)
    if args.json:
        print_json(result.to_dict())
    elif args.csv:
        write_csv(list(result.rows))
    else:
        print(text_table(list(result.rows)))
    return 0
