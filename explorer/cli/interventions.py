"""CLI of causal interventions (nnsight): ``patch``, ``ablate`` and ``steer``.

``python -m explorer patch --model M --clean T --corrupt T --target TOK --foil TOK [--site resid|attn|mlp|heads]
[--metric logit-diff|prob|kl] --json`` prints the grid (layers x positions, or layers x heads) normalised so 0 is the
corrupted run and 1 the clean one; ``--remote`` traces a model NDIF hosts instead (needs an NDIF API key and the
internet: not verified on the machine this was written on, and the output says so). ``ablate`` switches off a head,
a neuron, a block or a layer (``--rank-heads``: every head, beside the Compression lab's gradient importance);
``steer`` generates with and without a steering vector, greedy unless ``--sample``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from explorer.cli import add_model, placement_of, print_json
from explorer.cli.argtypes import number, seed
from explorer.cli.progress import Ticker
from explorer.core.errors import ExplorerError

if TYPE_CHECKING:
    from explorer.runtime.resolve import ModelRef

SITES = ("resid", "attn", "mlp", "heads")
METRICS = ("logit-diff", "prob", "kl")


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""
    p = sub.add_parser("patch", help="activation patching: restore clean activations inside a corrupted run")
    add_model(p)
    p.add_argument("--clean", required=True, help="the clean prompt (a blank ___ where the answer goes)")
    p.add_argument("--corrupt", required=True, help="the corrupted prompt, as many tokens as the clean one")
    p.add_argument("--target", required=True, help="the clean prompt's answer (its first token is scored)")
    p.add_argument("--foil", default=None, help="the corrupted prompt's answer (needed by logit-diff)")
    p.add_argument("--site", choices=SITES, default="resid", help="what is patched (default resid)")
    p.add_argument("--metric", choices=METRICS, default="logit-diff", help="what is measured (default logit-diff)")
    p.add_argument("--stack", choices=("encoder", "decoder"), default=None,
                   help="an encoder-decoder's stack to patch (default: the encoder, the typed prompt's positions)")
    p.add_argument("--remote", action="store_true", help="trace on NDIF: --model is a Hugging Face id NDIF hosts "
                   "(residual stream, logit-diff; needs the internet; not verified where this was written)")
    p.add_argument("--ndif-key", default=None, help="NDIF API key for --remote (else NDIF_API_KEY)")
    p.set_defaults(func=cmd_patch)

    a = sub.add_parser("ablate", help="zero or mean ablation of a head, a neuron, a block or a layer")
    add_model(a)
    a.add_argument("--text", required=True, help="the prompt (a blank ___ for masked LMs and T5/BART)")
    which = a.add_mutually_exclusive_group(required=True)
    which.add_argument("--head", metavar="L.H", help="a head, e.g. 12.2")
    which.add_argument("--neuron", metavar="L.N", help="an MLP neuron, e.g. 5.1023")
    which.add_argument("--block", metavar="L.attn|L.mlp", help="a layer's attention or MLP block, e.g. 3.mlp")
    which.add_argument("--layer", metavar="L", help="a whole layer (its contribution to the stream)")
    which.add_argument("--rank-heads", action="store_true",
                       help="every head by its ablation effect, beside the Compression lab's gradient importance")
    a.add_argument("--mode", choices=("zero", "mean"), default="zero", help="what replaces it (default zero)")
    a.add_argument("--target", default=None, help="the answer whose probability is followed (default: top token)")
    a.add_argument("--foil", default=None, help="--rank-heads: rank by target-minus-foil logit difference")
    a.set_defaults(func=cmd_ablate)

    s = sub.add_parser("steer", help="generate with and without a steering vector added at a layer")
    add_model(s)
    s.add_argument("--text", required=True, help="the prompt to continue")
    s.add_argument("--positive", required=True, action="append", help="a positive prompt (repeat for a list)")
    s.add_argument("--negative", required=True, action="append", help="a negative prompt (repeat for a list)")
    s.add_argument("--layer", required=True, type=number(int, 0, 10_000), help="the block after which it is added")
    s.add_argument("--coefficient", required=True, type=_coefficient, help="how much of the direction is added")
    s.add_argument("--max-new-tokens", type=number(int, 1, 64), default=24, help="tokens to generate (default 24)")
    s.add_argument("--sample", action="store_true", help="sample (seeded) instead of greedy decoding")
    s.add_argument("--seed", type=seed(), default=0, help="the sampling seed, the same for both runs")
    s.set_defaults(func=cmd_steer)


def _coefficient(text: str) -> float:
    """A finite coefficient (steering's own check, at parse time: one line, exit 2)."""
    return float(number(float, -1e6, 1e6)(text))


def _model(args: argparse.Namespace) -> ModelRef:
    """The model ``--model`` names, resolved once (a served name refused in words; nothing loaded yet)."""
    from explorer.interventions import models

    return models.local_ref(args.model, args.models_dir, random_weights=args.random_weights)


def _component(args: argparse.Namespace):
    from explorer.interventions import components

    for kind in components.KINDS:
        if getattr(args, kind, None) is not None:
            return components.parse(kind, getattr(args, kind))
    raise ExplorerError("Name what to ablate: --head L.H, --neuron L.N, --block L.attn|L.mlp or --layer L.")


def cmd_patch(args: argparse.Namespace) -> int:
    from explorer.interventions import patching, remote

    if args.remote:
        grid = remote.remote_patch(args.model, args.clean, args.corrupt, args.target, args.foil, key=args.ndif_key)
    else:
        where = placement_of(args).kwargs()  # a device this machine lacks: refused before the model is named
        ref = _model(args)
        with Ticker() as ticker:
            ticker.status = lambda s: f"patching… {s:.0f} s"
            grid = patching.patch(ref, args.clean, args.corrupt, args.target, args.foil, site=args.site,
                                  metric=args.metric, stack=args.stack, progress=lambda f, text: ticker.say(text),
                                  **where)
    out = grid.to_dict()
    if args.json:
        print_json(out)
        return 0
    for note in grid.notices:
        print(note)
    print(f"{grid.model}: {grid.title}; clean {grid.clean_metric:.4f}, corrupted {grid.corrupt_metric:.4f}")
    print("layer  " + " ".join(f"{c[:8]:>8}" for c in grid.columns))
    for i, row in enumerate(grid.grid):
        print(f"{i:>5}  " + " ".join(f"{v:8.3f}" for v in row))
    return 0


def cmd_ablate(args: argparse.Namespace) -> int:
    from explorer.interventions import ablation, models, ranking

    where = placement_of(args).kwargs()  # a device this machine lacks: refused before the model is named
    ref = _model(args)
    if args.rank_heads:
        loaded = models.load(ref, **where)
        result = ranking.rank_heads(loaded, args.text, args.target, args.foil, mode=args.mode)
        if args.json:
            print_json(result.to_dict())
            return 0
        for r in result.rows():
            print(f"{r['rank']:>3}. head {r['head']}: effect {r['effect']}, importance {r['gradient_importance']}")
        return 0
    done = ablation.ablate(ref, args.text, _component(args), mode=args.mode, target=args.target, **where)
    if args.json:
        print_json(done.to_dict())
        return 0
    print(f"{done.component} ({done.mode}): P({done.target!r}) {done.target_before:.4f} -> {done.target_after:.4f}"
          f", KL {done.kl:.4f} nats")
    for row in done.rows():
        print(f"  {row['token']!r:>20}  {row['before']}  ->  {row['after']}")
    return 0


def cmd_steer(args: argparse.Namespace) -> int:
    from explorer.interventions import steering

    where = placement_of(args).kwargs()  # a device this machine lacks: refused before the model is named
    result = steering.steer(_model(args), args.text, args.positive, args.negative, layer=args.layer,
                            coefficient=args.coefficient, max_new_tokens=args.max_new_tokens,
                            strategy="sample" if args.sample else "greedy", seed=args.seed, **where)
    if args.json:
        print_json(result.to_dict())
        return 0
    print(f"without: {result.prompt}{result.unsteered}")
    print(f"with {result.coefficient:+g} x direction at layer {result.layer}: {result.prompt}{result.text}")
    return 0
