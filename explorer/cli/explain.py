"""CLI of "Why this prediction": ``lens``, ``attribute`` and ``tuned-lens train``, the page's library calls.

    python -m explorer lens --model gemma3-270m --text "The capital of France is" --target Paris --json
    python -m explorer attribute --model gemma3-270m --text "The capital of France is" --target Paris --method ig
    python -m explorer attribute --endpoint gemma --text "The capital of France is" --target Paris --method occlusion
    python -m explorer tuned-lens train --model gemma3-270m --steps 20

``lens`` reads every layer (0: the embeddings) through the model's own final norm and head at one position
(:func:`explorer.explain.lens.run`; ``--tuned``: through the tuned lens trained for the model). ``attribute``
scores every token of the text for the target, against an optional foil (:func:`explorer.explain.attribution.run`;
a served model: occlusion through its scoring, :func:`explorer.explain.served.attribute`). ``tuned-lens train``
trains the translators on the bundled corpus or ``--text-file`` and saves them beside the model, with progress on
stderr. A served model's insides (layers, gradients) are not available: ``lens`` and the gradient methods say so.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from explorer.cli import add_model, placement_of, print_json
from explorer.cli.argtypes import number, read_source, text_source
from explorer.cli.progress import Ticker, eta
from explorer.cli.served import add_endpoint_flags, endpoint_from_args
from explorer.core.errors import ExplorerError
from explorer.core.notices import texts
from explorer.explain import task as tasks
from explorer.explain.methods import METHODS
from explorer.runtime.resolve import ModelRef, resolve
from explorer.training import corpus

__all__ = ["cmd_attribute", "cmd_lens", "cmd_tuned_lens_train", "register"]



def register(sub: argparse._SubParsersAction) -> None:
    """Add ``lens``, ``attribute`` and ``tuned-lens``."""
    p = sub.add_parser("lens", help="every layer's prediction through the model's own head (logit or tuned lens)")
    add_model(p)
    text_source(p, help="the text (a blank ___ for a masked LM or T5/BART)")
    p.add_argument("--position", type=int, default=None, help="the token read (default: where the target goes)")
    p.add_argument("--target", default=None, help="the token whose rank and probability each layer gives")
    p.add_argument("--top-k", type=number(int, 1, 50), default=5, help="tokens listed per layer")
    p.add_argument("--tuned", action="store_true", help="read through the tuned lens trained for this model")
    add_endpoint_flags(p)
    p.set_defaults(func=cmd_lens)

    a = sub.add_parser("attribute", help="each token's share of a prediction: gradients, integrated gradients, "
                                         "occlusion")
    add_model(a)
    text_source(a, help="the text (a blank ___ for a masked LM or T5/BART)")
    a.add_argument("--target", required=True, help="the predicted token or word (a sentence encoder: the second "
                                                   "sentence)")
    a.add_argument("--foil", default=None, help="contrast: score log p(target) - log p(foil)")
    a.add_argument("--method", choices=list(METHODS), default="ig", help="how tokens are scored (default ig)")
    a.add_argument("--steps", type=_ig_steps, default="auto",
                   help="integrated gradients' steps: 1 to 512, or auto (default: raised until the scores sum to "
                        "the difference within 1%%)")
    add_endpoint_flags(a)
    a.set_defaults(func=cmd_attribute)

    t = sub.add_parser("tuned-lens", help="train a tuned lens (one affine translator per layer)")
    tsub = t.add_subparsers(dest="tuned_command", required=True)
    tr = tsub.add_parser("train", help="train the translators on the bundled corpus or a text file, save them")
    add_model(tr)
    tr.add_argument("--text-file", default=None, metavar="PATH", help="a UTF-8 text to train on (default: the "
                                                                        "bundled Python documentation)")
    tr.add_argument("--steps", type=number(int, 1, 100_000), default=None, help="training steps (default 20)")
    tr.add_argument("--windows", type=number(int, 1, 256), default=None, help="windows per step (default 2)")
    tr.add_argument("--seq-len", type=number(int, 4, 2048), default=None, help="tokens per window (default 32)")
    tr.add_argument("--heldout", type=number(int, 1, 1024), default=None, help="held-out windows (default 4)")
    tr.add_argument("--out", default=None, metavar="DIR", help="where to save (default: beside the model)")
    tr.set_defaults(func=cmd_tuned_lens_train)


def _ref(args: argparse.Namespace) -> ModelRef:
    return resolve(args.model, args.models_dir, random_weights=args.random_weights)


def cmd_lens(args: argparse.Namespace) -> int:
    """Print every layer's reading at one position."""
    from explorer.explain import lens
    from explorer.explain.attribution import SERVED_INSIDES

    ep = endpoint_from_args(args)
    if ep is not None:
        raise ExplorerError(f"{ep.shown}: the lens reads the model's layers, and {SERVED_INSIDES}.")
    result = lens.run(_ref(args), read_source(args), args.target, position=args.position, top_k=args.top_k,
                      tuned=args.tuned, grid=False, **placement_of(args).kwargs())
    if args.json:
        print_json(result.to_dict())
        return 0
    print(f"== {result.model} [{result.kind} lens, position {result.position} {result.position_token!r}, "
          f"{result.device}]")
    for x in result.layers:
        rank = f"  target rank {x.target_rank}" if x.target_rank is not None else ""
        print(f"  layer {x.layer:>3}: {x.top[0][0]!r} {x.top[0][1]:.3f}  entropy {x.entropy:.2f}  "
              f"KL {x.kl_to_final:.3f}{rank}")
    for note in texts(result.notices):
        print(f"   note: {note}")
    return 0


def _ig_steps(text: str) -> int | str:
    """``auto`` or a whole number of steps from 1 to 512 (at parse time: one line, exit 2)."""
    return "auto" if text.strip().lower() == "auto" else int(number(int, 1, 512)(text))


def cmd_attribute(args: argparse.Namespace) -> int:
    """Print every token's score."""
    from explorer.explain import attribution, served

    ep = endpoint_from_args(args)
    text = read_source(args)
    with Ticker() as ticker:
        report = lambda f, what: ticker.say(f"{what} ({f:.0%}, {eta(ticker.elapsed, f)} left)")  # noqa: E731
        if ep is not None:
            result = served.attribute(ep, text, args.target, args.method, foil=args.foil, progress=report)
        else:
            result = attribution.run(_ref(args), text, args.target, args.method, foil=args.foil, steps=args.steps,
                                     progress=report, **placement_of(args).kwargs())
    if args.json:
        print_json(result.to_dict())
        return 0
    print(f"== {result.model} [{attribution.METHOD_NAMES[result.method]}, {result.device_name}]")
    print(f"   {result.objective} = {result.output:.4f}")
    if result.completeness is not None:
        print(f"   baseline {result.baseline_output:.4f}; completeness gap {result.completeness:.2%} "
              f"({result.steps} steps)")
    for t in result.tokens:
        print(f"  {t.token!r:>20} {'' if t.score is None else f'{t.score:+.4f}'}")
    for note in texts(result.notices):
        print(f"   note: {note}")
    return 0


def cmd_tuned_lens_train(args: argparse.Namespace) -> int:
    """Train and save the tuned lens; progress on stderr, the held-out KL per layer at the end."""
    from explorer.explain import translator, tuning
    from explorer.runtime import loading

    chosen = {k: v for k, v in (("steps", args.steps), ("windows", args.windows), ("seq_len", args.seq_len),
                                ("heldout", args.heldout)) if v is not None}
    spec = replace(tuning.DEFAULT_SPEC, **chosen).checked()
    if args.out is not None:
        translator.check_out(args.out)  # before any model loads: a folder of the user's is never replaced
    text = corpus.from_file(args.text_file) if args.text_file is not None else corpus.bundled()
    ref = _ref(args)
    loaded = loading.load_model(ref, tasks.loading_task(ref), purpose="the tuned lens",
                                **placement_of(args).kwargs())
    with Ticker() as ticker:
        def progress(fraction: float, what: str) -> None:
            ticker.say(f"{what} ({eta(ticker.elapsed, fraction)} left)")
        report = tuning.train(loaded, spec, text, progress=progress, out=args.out)
    if args.json:
        print_json(report.to_dict())
        return 0
    print(f"== tuned lens of {args.model}: {report.steps} steps, {report.tokens:,} tokens of {report.corpus}, "
          f"{report.seconds:.0f} s; saved in {report.folder}")
    for layer, (a, b) in enumerate(zip(report.logit_kl, report.tuned_kl, strict=True)):
        print(f"  layer {layer:>3}: held-out KL  logit lens {a:8.3f}   tuned lens {b:8.3f}")
    return 0
