"""CLI of the tokenization area: ``python -m explorer tokenize --text TEXT [--tokenizers a,b] [--json]``.

A served model's own tokenizer, asked of its server (its token ids, each token's text):

    python -m explorer tokenize --endpoint gemma --text "Tokenizers split words into pieces."
"""

from __future__ import annotations

import argparse
import sys

from explorer.cli import print_json
from explorer.cli.served import add_endpoint_flags, endpoint_from_args
from explorer.cli.textinput import read_stdin
from explorer.core.errors import ExplorerError

__all__ = ["cmd_tokenize", "register"]


def _names(text: str) -> list[str]:
    """``"gpt2,t5"`` -> ["gpt2", "t5"] (validated later against the shipped tokenizers)."""
    return [n.strip() for n in text.split(",") if n.strip()]


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""
    p = sub.add_parser("tokenize", help="split a text with every shipped tokenizer: tokens, ids, counts")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", help="the text to tokenize")
    src.add_argument("--stdin", action="store_true", help="read the text from standard input")
    src.add_argument("--list", action="store_true", help="list the shipped tokenizers and exit")
    p.add_argument("--tokenizers", type=_names, default=None,
                   help="comma-separated names (default: all): bert-base-uncased,bert-base-cased,gpt2,t5,bigbird")
    p.add_argument("--json", action="store_true", help="print JSON (a list: one object per tokenizer)")
    add_endpoint_flags(p)
    p.set_defaults(func=cmd_tokenize)


def _record(t) -> dict:
    """The JSON object of one tokenizer's result (the library's to_dict plus its label)."""
    from explorer.tokenization import TOKENIZERS

    spec = TOKENIZERS.get(t.name)
    if spec is None:  # a served model's tokenizer
        return {"name": t.name, "label": t.name, "algorithm": "the server's own", **t.to_dict()}
    return {"name": t.name, "label": spec.label, "algorithm": spec.algorithm, **t.to_dict()}


def _served(args: argparse.Namespace, text: str) -> list:
    """The served model's tokenization, when the command line names one (its notes on stderr)."""
    ep = endpoint_from_args(args)
    if ep is None:
        return []
    from explorer.serving import backend

    out = backend.served(ep).tokens(text)
    for notice in out.notices:
        print(f"note: {notice.text}", file=sys.stderr)
    return [out.tokenization]


def cmd_tokenize(args: argparse.Namespace) -> int:
    """Print every chosen tokenizer's tokens and ids (JSON or a short text table)."""
    from explorer import tokenization as tk

    if args.list:
        specs = [s.to_dict() for s in tk.TOKENIZERS.values()]
        if args.json:
            print_json(specs)
        else:
            for s in specs:
                print(f"{s['name']:18s} {s['algorithm']:24s} limit {s['model_max_length']:5d}  {s['label']}")
        return 0
    text = read_stdin() if args.stdin else args.text
    if args.tokenizers == []:
        raise ExplorerError(f"--tokenizers is empty: give one or more of {', '.join(tk.TOKENIZERS)}.")
    served = _served(args, text)
    results = served + (tk.compare(text, args.tokenizers) if args.tokenizers or not served else [])
    if args.json:
        print_json([_record(t) for t in results])
        return 0
    for t in results:
        cut = f", cut at character {t.truncated_at}" if t.truncated_at is not None else ""
        print(f"{t.name}: {t.count} tokens ({t.fertility:.2f} per word, {len(t.unknown)} unknown{cut})")
        print("  tokens: " + " ".join(t.tokens))
        print("  ids:    " + " ".join(map(str, t.ids)))
    return 0
