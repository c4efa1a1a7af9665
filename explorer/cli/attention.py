"""CLI of the attention area: ``python -m explorer attention --model KEY_OR_PATH --text TEXT [--json]``.

Prints the layers, heads, tokens and the shape of the attention tensor it extracted (always the
full square, Longformer and BigBird included), plus one view's matrix with ``--layer``, and can
save the whole tensor or the view as ``.npy``. Long texts stay bounded: ``--block`` prints one head's
block-averaged map (at most 256 x 256 cells), ``--zoom Q0:Q1[,K0:K1]`` its full-resolution cells in that
range (at most 512 a side), ``--query Q`` one query's full row; a ``--layer`` matrix wider than 512 tokens
is printed as its block map.
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

from explorer.cli import add_placement, placement_of, print_json
from explorer.cli.argtypes import number, read_source, text_source
from explorer.core.errors import ExplorerError, shorten
from explorer.runtime import capacity
from explorer.runtime.resolve import ModelRef, resolve


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""
    from explorer.tasks.attention import MAX_TOKENS
    from explorer.tasks.attention.views import VIEWS

    p = sub.add_parser("attention", help="real attention weights of a model on a text (eager kernel)")
    p.add_argument("--model", required=True, help="catalog key (sentence-bert is bundled) or a model directory")
    text_source(p, help="the text to run through the model")
    p.add_argument("--target", default=None, help="encoder-decoders: decoder text (default: the text)")
    p.add_argument("--layer", type=number(int, 0, 10_000), default=None, help="print this layer's matrix (0-based)")
    p.add_argument("--head", type=number(int, 0, 10_000), default=0, help="head of --layer (0-based, default 0)")
    p.add_argument("--view", default="head", choices=VIEWS, help="which matrix --layer prints")
    p.add_argument("--range", dest="token_range", type=_token_range, default=None,
                   help="zoom the printed matrix to tokens START:END")
    # The device's ceiling is checked in cmd_attention (it depends on --device); here only the absolute range.
    p.add_argument("--max-tokens", type=number(int, 2, 1_000_000), default=MAX_TOKENS,
                   help=f"truncate to this many (CPU: <= {MAX_TOKENS}; a GPU takes more, see "
                        "explorer.runtime.capacity)")
    p.add_argument("--block", action="store_true", help="print --layer/--head as a block-averaged map (<= 256 a side)")
    p.add_argument("--zoom", type=_zoom, default=None, metavar="Q0:Q1[,K0:K1]",
                   help="print --layer/--head at full resolution for these queries (and keys; default the same)")
    p.add_argument("--query", type=number(int, 0, 1_000_000), default=None,
                   help="print query Q's full-resolution row of --layer/--head")
    p.add_argument("--random-weights", action="store_true", help="untrained model from the variant's config")
    p.add_argument("--models-dir", default=None, help="where downloaded weights live (else EXPLORER_MODELS_DIR)")
    p.add_argument("--npy", type=Path, default=None,
                   help="save the attention tensor (or, with --layer, the printed matrix) as .npy")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_placement(p)
    p.set_defaults(func=cmd_attention)


def _token_range(text: str) -> tuple[int, int]:
    try:
        start, end = (int(x) for x in text.split(":"))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"ranges take START:END token positions, got {shorten(text)!r}") from err
    return start, end


def _zoom(text: str) -> tuple[tuple[int, int], tuple[int, int]]:
    parts = text.split(",")
    if len(parts) > 2:
        raise argparse.ArgumentTypeError(f"--zoom takes Q0:Q1 or Q0:Q1,K0:K1, got {shorten(text)!r}")
    rows = _token_range(parts[0])
    return rows, _token_range(parts[1]) if len(parts) == 2 else rows


def _detail(args: argparse.Namespace, ref: ModelRef, maps, text: str) -> dict | None:
    """The bounded views: block map, zoom, query row (``None`` when none was asked for)."""
    from explorer.tasks.attention import blocks, detail

    if not (args.block or args.zoom or args.query is not None):
        return None
    layer = 0 if args.layer is None else args.layer
    rerun = functools.partial(_rerun, args, ref, text)
    if args.zoom is not None:
        rows, cols = args.zoom
        cells = detail.zoom_cells(maps, layer, args.head, rows, cols, rerun=rerun)
        return {"kind": "zoom", "layer": layer, "head": args.head, "rows": list(args.zoom[0]),
                "cols": list(args.zoom[1]), "shape": list(cells.shape), "matrix": _rounded(cells)}
    if args.query is not None:
        row = detail.query_cells(maps, layer, args.head, args.query, rerun=rerun)
        return {"kind": "query", "layer": layer, "head": args.head, "query": args.query,
                "token": maps.tokens[args.query], "row": _rounded(row)}
    cells = detail.block_map(maps, layer, args.head)
    size = detail.block_size(maps)
    return {"kind": "block", "layer": layer, "head": args.head, "block": size, "shape": list(cells.shape),
            "edges": blocks.block_edges(len(maps.tokens), size), "matrix": _rounded(cells)}


def _rerun(args: argparse.Namespace, ref: ModelRef, text: str, layer: int, head: int, rows: tuple[int, int],
           cols: tuple[int, int] | None):
    from explorer.tasks.attention.extract import load_detail

    return load_detail(ref, text, layer=layer, head=head, rows=rows, cols=cols, target=args.target,
                                 max_tokens=args.max_tokens, **placement_of(args).kwargs())


def _rounded(cells) -> list:
    import numpy as np

    return np.round(cells.astype(np.float64), 4).tolist()


def cmd_attention(args: argparse.Namespace) -> int:
    """Extract, then print the summary (and the selected matrix) as JSON or text."""
    from explorer.tasks import attention
    from explorer.tasks.attention import compact

    placement = placement_of(args)
    ceiling = capacity.attention_ceiling(capacity.device_facts(placement.resolve()[0]))
    if not 2 <= args.max_tokens <= ceiling:
        raise ExplorerError(f"--max-tokens must be between 2 and {ceiling:,} on this device, got {args.max_tokens}.")

    text = read_source(args)
    ref = resolve(args.model, args.models_dir, random_weights=args.random_weights)  # once, for every load below
    maps = attention.extract(ref, text, target=args.target, max_tokens=args.max_tokens, **placement.kwargs())
    detail = _detail(args, ref, maps, text)
    view = None
    if detail is None and args.layer is not None:
        if maps.block > 1 or (args.view != "cross" and _side(maps, args.token_range) > attention.DISPLAY_TOKENS):
            args.block = True  # a bounded answer: the block map (JSON of T x T cells would be huge)
            detail = _detail(args, ref, maps, text)
        else:
            view = attention.select_view(maps, args.view, args.layer, args.head, args.token_range)
    if args.npy is not None:
        _save(args.npy, compact.npy_bytes(view.matrix if view else maps.attentions))
    out = maps.to_dict()
    if view is not None:
        out["selected"] = view.to_dict()
    if detail is not None:
        out["detail"] = detail
    if args.json:
        print_json(out)
    else:
        _print_text(out)
    return 0


def _side(maps, token_range: tuple[int, int] | None) -> int:
    from explorer.tasks.attention.views import clamp_range

    start, end = clamp_range(token_range, len(maps.tokens))
    return end - start


def _save(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as err:
        raise ExplorerError(f"Cannot write {shorten(path)}: {err.strerror or err}.") from err


def _print_text(out: dict) -> None:
    print(f"{out['model']}: {out['family']}, {out['layers']} layers x {out['heads']} heads, "
          f"{out['n_tokens']} tokens, tensor {tuple(out['shape'])} ({out['source_format']}) "
          f"[{out['device_name']} · {out['dtype']}]")
    for note in out["notices"]:
        print(f"  note: {note}")
    print("  tokens: " + " ".join(out["tokens"]))
    det = out.get("detail")
    if det:
        print(f"  {det['kind']} of layer {det['layer']}, head {det['head']}: "
              + (f"row of query {det['query']} ({det['token']}): " + " ".join(f"{v:.3f}" for v in det["row"])
                 if det["kind"] == "query" else f"{tuple(det['shape'])} cells (JSON has them)"))
    sel = out.get("selected")
    if sel:
        print(f"  {sel['title']} {tuple(sel['shape'])}:")
        for tok, row in zip(sel["row_tokens"], sel["matrix"], strict=True):
            print(f"  {tok[:12]:>12} " + " ".join(f"{v:.2f}" for v in row))
