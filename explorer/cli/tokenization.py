"""CLI of the tokenization area: ``python -m explorer tokenize --text TEXT [--tokenizers a,b] [--json]``."""

from __future__ import annotations

import argparse

from explorer.cli import print_json, read_stdin
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
    p.set_defaults(func=cmd_tokenize)


def _record(t) -> dict:
    """The JSON object of one tokenizer's result (the library's to_dict plus its label)."""
    from explorer.tokenization import TOKENIZERS

    spec = TOKENIZERS[t.name]
    return {"name": t.name, "label": spec.label, "algorithm": spec.algorithm, **t.to_dict()}


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
    results = tk.compare(text, args.tokenizers)
    if args.json:
        print_json([_record(t) for t in results])
        return 0
    for t in results:
        cut = f", cut at character {t.truncated_at}" if t.truncated_at is not None else ""
        print(f"{t.name}: {t.count} tokens ({t.fertility:.2f} per word, {len(t.unknown)} unknown{cut})")
        print("  tokens: " + " ".join(t.tokens))
        print("  ids:    " + " ".join(map(str, t.ids)))
    return 0
