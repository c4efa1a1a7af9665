"""CLI of the objectives area: ``python -m explorer mask STRATEGY --text TEXT --seed N --json``.

Token-level strategies print ``original_tokens``, ``input_tokens`` and ``targets`` (same
length; null where nothing is predicted), ELECTRA adds ``labels`` (1 = replaced); the
sequence-to-sequence ones print ``original_tokens``, ``input_tokens`` and ``target_tokens``;
sentence-level ones the pair and its ``label``. ``mask --list`` names the strategies.
"""

from __future__ import annotations

import argparse

from explorer.cli import print_json
from explorer.cli.argtypes import number, seed
from explorer.core.errors import ExplorerError


def _list(as_json: bool) -> int:
    from explorer.objectives import STRATEGIES

    if as_json:
        print_json([s.to_dict() for s in STRATEGIES.values()])
        return 0
    width = max(map(len, STRATEGIES))
    for s in STRATEGIES.values():
        print(f"{s.name:<{width}}  [{s.group}; {s.kind}; {s.tokenizer}] {s.label}")
    return 0


def _text_output(result: dict) -> None:
    """A short human-readable rendering (the JSON is the full result)."""
    print("input:  " + " ".join(result["input_tokens"]))
    if "target_tokens" in result:
        print("target: " + " ".join(result["target_tokens"]))
    if "targets" in result:
        shown = [f"{i}:{t}" for i, t in enumerate(result["targets"]) if t is not None]
        print("targets: " + " ".join(shown))
    if "label" in result:
        print(f"label:  {result['label']}")


def cmd_mask(args: argparse.Namespace) -> int:
    """Run one strategy on --text with --seed (and --epoch) and print its result."""
    if args.list:
        return _list(args.json)
    if not args.strategy:
        raise ExplorerError("Name a strategy (python -m explorer mask --list shows them), e.g. mask bert --text 'Hello "
                            "world.'")
    from explorer.objectives import get_strategy, run
    from explorer.objectives.text import prepare

    strategy = get_strategy(args.strategy)
    if args.text is None:
        raise ExplorerError("Give the text to mask with --text 'Some sentences.'")
    if args.seed < 0 or args.epoch < 0:
        raise ExplorerError("--seed and --epoch must be non-negative integers.")
    pair = (args.text2 or "") if strategy.pair else None
    if pair is not None and not pair.strip():  # None exactly when not strategy.pair
        raise ExplorerError(f"{strategy.name} needs a translation of --text: add --text2 'La traduction.'")
    prepared = prepare(args.text, strategy.tokenizer, strategy.frame, pair=pair)
    options = {}
    if args.p_original is not None:
        if strategy.name != "electra" or not 0 <= args.p_original <= 1:
            raise ExplorerError("--p-original is ELECTRA's generator hit rate: use it with electra, between 0 and 1.")
        options["p_original"] = args.p_original
    result = run(strategy.name, prepared.tokens, args.seed, prepared.vocab, epoch=args.epoch, **options).to_dict()
    result.update(tokenizer=prepared.tokenizer, seed=args.seed, epoch=args.epoch, truncated=prepared.truncated)
    if args.json:
        print_json(result)
    else:
        _text_output(result)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""
    p = sub.add_parser("mask", help="apply a pretraining objective (masking / corruption) to a text")
    p.add_argument("strategy", nargs="?", help="strategy name (see --list)")
    p.add_argument("--text", help="the text to corrupt")
    p.add_argument("--text2", help="the translation of --text (xlm-tlm only)")
    p.add_argument("--seed", type=seed(), default=0, help="random seed (default 0)")
    p.add_argument("--epoch", type=seed(), default=0, help="epoch: the generator is seeded with (seed, epoch)")
    p.add_argument("--p-original", type=number(float, 0, 1),
                   help="electra: how often the generator proposes the original token (0.25)")
    p.add_argument("--json", action="store_true", help="print the structured result as JSON")
    p.add_argument("--list", action="store_true", help="list the strategies and exit")
    p.set_defaults(func=cmd_mask)
