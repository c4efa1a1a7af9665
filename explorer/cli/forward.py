"""CLI of "Forward pass": every operation of every layer recomputed from the model's weights, each checked.

    python -m explorer forward --model gemma3-270m --text "The capital of France is" --json
    python -m explorer forward --model sentence-bert --text "A cat sat on the mat." --layer 2 --head 0
    python -m explorer forward --model t5-small --random-weights --text "translate English to German: Hello"

Each step has its name, layer, kind (embed, norm, q, k, v, scores, softmax, residual, mlp-up, ...), shape, mean,
standard deviation and ``max_abs_error``: its distance from the model's own intermediate, hooked on the module at
that point (or at the nearest later one, which ``checked_against`` names). ``top`` is the prediction read from the
recomputed logits (the next token, the blank, or an encoder-decoder's first answer token);
``logits_max_abs_error`` compares them with the model's own forward. ``--layer`` keeps one layer's steps (and the
embeddings and head), ``--head`` one head of each per-head step. Bad input is refused before the model loads.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from explorer.cli import add_model, placement_of, print_json
from explorer.cli.argtypes import number, read_source, text_source
from explorer.core.notices import texts
from explorer.runtime.resolve import resolve

if TYPE_CHECKING:  # typing only: the step-through imports torch, loaded by the command itself
    from explorer.internals.forward.steps import Step

__all__ = ["cmd_forward", "register"]

MAX_INDEX = 100_000  # a layer or head past any model's; the model's own range is checked from its config


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``forward``."""
    p = sub.add_parser("forward", help="the forward pass step by step, each operation recomputed and checked "
                                       "against the model's own")
    add_model(p)
    text_source(p, help="the text (up to 64 tokens; a blank ___ for a masked LM)")
    p.add_argument("--layer", type=number(int, 0, MAX_INDEX), default=None, help="keep this layer's steps only")
    p.add_argument("--head", type=number(int, 0, MAX_INDEX), default=None,
                   help="keep this head of each per-head step (queries, scores, softmax, ...)")
    p.add_argument("--top-k", type=number(int, 1, 50), default=5, help="predicted tokens listed")
    p.add_argument("--temperature", type=number(float, 0, 100, lo_open=True), default=1.0,
                   help="softmax temperature of the prediction (default 1)")
    p.set_defaults(func=cmd_forward)


def _line(step: Step) -> str:
    layer = "" if step.layer is None else step.layer
    error = step.max_abs_error
    shown = "unchecked" if error is None else f"{error:.1e}{'' if step.exact else ' (later)'}"
    return (f"  {step.stack[:3]} {layer!s:>3} {step.kind:<10} {step.name[:46]:<46} "
            f"{'x'.join(str(n) for n in step.shape):>14} mean {step.mean:+.3g} std {step.std:.3g} {shown}")


def cmd_forward(args: argparse.Namespace) -> int:
    """Print every step of one forward pass."""
    from explorer.internals.forward import run

    ref = resolve(args.model, args.models_dir, random_weights=args.random_weights)
    result = run.run(ref, read_source(args), layer=args.layer, head=args.head, top_k=args.top_k,
                     temperature=args.temperature, keep_tensors=False, **placement_of(args).kwargs())
    if args.json:
        print_json(result.to_dict())
        return 0
    print(f"== {result.model} [{result.card.card.label}, {result.family}, {result.device}] "
          f"{len(result.tokens)} tokens, {len(result.steps)} steps")
    for step in result.steps:
        print(_line(step))
    error = result.logits_max_abs_error
    print(f"   logits against the model's own: {'-' if error is None else f'{error:.1e}'}")
    for token, probability in result.top:
        print(f"   {token!r:>20} {probability:.4f}")
    for note in texts(result.notices):
        print(f"   note: {note}")
    return 0
