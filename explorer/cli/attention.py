"""CLI of the attention area: ``python -m explorer attention --model KEY_OR_PATH --text TEXT [--json]``.

Prints the layers, heads, tokens and the shape of the attention tensor it extracted (always the
full square, Longformer and BigBird included), plus one view's matrix with ``--layer``, and can
save the whole tensor or the view as ``.npy``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from explorer.errors import ExplorerError, shorten


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""
    from explorer.attention import MAX_TOKENS, VIEWS
    from explorer.cli.argtypes import number, text_source

    p = sub.add_parser("attention", help="real attention weights of a model on a text (eager kernel)")
    p.add_argument("--model", required=True, help="catalog key (sentence-bert is bundled) or a model directory")
    text_source(p, help="the text to run through the model")
    p.add_argument("--target", default=None, help="encoder-decoders: decoder text (default: the text)")
    p.add_argument("--layer", type=number(int, 0, 10_000), default=None,
                   help="print this layer's matrix (0-based)")
    p.add_argument("--head", type=number(int, 0, 10_000), default=0, help="head of --layer (0-based, default 0)")
    p.add_argument("--view", default="head", choices=VIEWS, help="which matrix --layer prints")
    p.add_argument("--range", dest="token_range", type=_token_range, default=None,
                   help="zoom the printed matrix to tokens START:END")
    p.add_argument("--max-tokens", type=number(int, 2, MAX_TOKENS), default=MAX_TOKENS,
                   help=f"truncate to this many (<= {MAX_TOKENS})")
    p.add_argument("--random-weights", action="store_true", help="untrained model from the variant's config")
    p.add_argument("--models-dir", default=None, help="where downloaded weights live (else EXPLORER_MODELS_DIR)")
    p.add_argument("--npy", type=Path, default=None,
                   help="save the attention tensor (or, with --layer, the printed matrix) as .npy")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_attention)


def _token_range(text: str) -> tuple[int, int]:
    try:
        start, end = (int(x) for x in text.split(":"))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"--range takes START:END token positions, got {shorten(text)!r}") from err
    return start, end


def cmd_attention(args: argparse.Namespace) -> int:
    """Extract, then print the summary (and the selected matrix) as JSON or text."""
    from explorer import attention
    from explorer.cli import print_json

    if not 2 <= args.max_tokens <= attention.MAX_TOKENS:
        raise ExplorerError(f"--max-tokens must be between 2 and {attention.MAX_TOKENS}, got {args.max_tokens}.")
    from explorer.cli.argtypes import read_source

    maps = attention.extract(args.model, read_source(args), target=args.target, max_tokens=args.max_tokens,
                             random_weights=args.random_weights, models_dir=args.models_dir)
    view = None
    if args.layer is not None:
        view = attention.select_view(maps, args.view, args.layer, args.head, args.token_range)
    if args.npy is not None:
        _save(args.npy, attention.npy_bytes(view.matrix if view else maps.attentions))
    out = maps.to_dict()
    if view is not None:
        out["selected"] = view.to_dict()
    if args.json:
        print_json(out)
    else:
        _print_text(out)
    return 0


def _save(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as err:
        raise ExplorerError(f"Cannot write {shorten(path)}: {err.strerror or err}.") from err


def _print_text(out: dict) -> None:
    print(f"{out['model']}: {out['family']}, {out['layers']} layers x {out['heads']} heads, "
          f"{out['n_tokens']} tokens, tensor {tuple(out['shape'])} ({out['source_format']})")
    for note in out["notices"]:
        print(f"  note: {note}")
    print("  tokens: " + " ".join(out["tokens"]))
    sel = out.get("selected")
    if sel:
        print(f"  {sel['title']} {tuple(sel['shape'])}:")
        for tok, row in zip(sel["row_tokens"], sel["matrix"], strict=True):
            print(f"  {tok[:12]:>12} " + " ".join(f"{v:.2f}" for v in row))
