"""CLI of the patterns area: ``python -m explorer pattern KEY --seq-len N [--json]``."""

from __future__ import annotations

import argparse

from explorer.cli import print_json
from explorer.cli.argtypes import number, seed
from explorer.core.errors import ExplorerError
from explorer.core.userinput import parse_positions


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""
    from explorer.architecture.patterns.kinds import MAX_LEN

    p = sub.add_parser("pattern", help="attention pattern of a variant: non-zeros, density, score memory")
    p.add_argument("key", help="variant key (python -m explorer list)")
    p.add_argument("--seq-len", type=number(int, 1, MAX_LEN), required=True,
                   help="sequence length in tokens")
    p.add_argument("--layer", type=number(int, 0, 10_000), default=0,
                   help="layer index (alternating / per-layer windows)")
    p.add_argument("--part", default="auto", choices=["auto", "encoder", "decoder", "cross"],
                   help="encoder-decoders: which attention (default: encoder)")
    p.add_argument("--dec-len", type=number(int, 1, MAX_LEN), default=None,
                   help="decoder length (default: --seq-len)")
    p.add_argument("--global", dest="global_positions", default="",
                   help="Longformer: extra global token positions, e.g. 5,17 ([CLS]=0 always is)")
    p.add_argument("--seed", type=seed(), default=0, help="BigBird: seed of the random blocks")
    p.add_argument("--dilation", type=number(int, 1, MAX_LEN), default=1,
                   help="Longformer: window dilation")
    p.add_argument("--verify", action="store_true",
                   help="also count the non-zeros by streaming the mask (nnz_from_mask)")
    p.add_argument("--curve", action="store_true", help="add the cost curve for 512..16,384 tokens")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_pattern)


def cmd_pattern(args: argparse.Namespace) -> int:
    """Print the pattern's kind and closed-form costs (and optional checks / curve)."""
    from explorer.architecture import patterns
    from explorer.architecture.patterns import kinds, masks

    if args.seq_len <= 0:
        raise ExplorerError(f"--seq-len must be a positive number of tokens, got {args.seq_len}.")
    glob = parse_positions(args.global_positions, min(args.seq_len, kinds.MAX_LEN), what="--global positions")
    vp = patterns.pattern_for_variant(
        args.key, args.seq_len, args.layer, part=args.part, global_positions=glob,
        seed=args.seed, dilation=args.dilation, dec_len=args.dec_len,
    )
    out = vp.to_dict()
    if args.verify:
        out["nnz_from_mask"] = masks.nnz_from_mask(vp.spec)
    curve = None
    if args.curve:
        curve = patterns.variant_cost_curve(
            args.key, layer=None, part=args.part, global_positions=glob,
            seed=args.seed, dilation=args.dilation,
        )
        out["cost_curve"] = curve.to_dict()
    if args.json:
        print_json(out)
        return 0
    print(f"{vp.name} ({vp.key}), {vp.part} layer {vp.layer}/{vp.n_layers - 1}: {vp.layer_kind}")
    print(f"  {vp.stats.note}")
    for field in ("kind", "effective_kind", "nnz", "density", "score_memory_bytes",
                  "dense_score_memory_bytes", "flops", "nnz_from_mask"):
        if field in out:
            print(f"  {field:<26} {_fmt(out[field])}")
    if curve is not None:  # per head and layer, averaged over the model's layers
        print("  tokens      non-zeros (mean over layers)   score memory (MiB)")
        for t, n, m in zip(curve.lengths, curve.nnz, curve.score_memory_bytes, strict=True):
            print(f"  {t:>6}  {n:>28,.0f}  {m / 2**20:>19,.2f}")
    return 0


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return f"{value:,}" if isinstance(value, int) else str(value)
