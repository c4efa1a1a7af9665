"""CLI of the feature lab: ``sae train|evaluate|features|feature|steer``, the Features page's library calls.

    python -m explorer sae train --model gemma3-270m --site resid --layer 9 --kind topk --width 4096 --k 32 --out DIR
    python -m explorer sae evaluate --sae DIR --json
    python -m explorer sae features --sae DIR --text "The capital of France is" --json
    python -m explorer sae feature --sae DIR --id 12 --json
    python -m explorer sae steer --sae DIR --id 12 --value 40 --text "The capital of France is" --json

``train`` harvests the bundled corpus (or ``--text-file``) at the site, trains, measures on held-out text and saves
in SAELens's layout plus our record (:func:`explorer.features.pipeline.train`), with progress on stderr. The other
commands read any dictionary folder: ours, SAELens's (``cfg.json`` + ``sae_weights.safetensors``) or Gemma Scope's
(``params.safetensors``); the model is the one its record names, else ``--model``; a file that names no site takes
``--site`` and ``--layer``.
"""

from __future__ import annotations

import argparse

from explorer.cli import add_placement, placement_of, print_json
from explorer.cli.argtypes import number, read_source, text_source
from explorer.cli.progress import Ticker, eta
from explorer.core.errors import ExplorerError
from explorer.explain import task as tasks
from explorer.features import recipe
from explorer.runtime.resolve import resolve
from explorer.training import corpus

__all__ = ["register"]

KINDS = ("topk", "jumprelu", "transcoder")  # explorer.features.recipe.KINDS (torch-free here)
SITES = ("resid", "attn", "mlp")


def _model_flags(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument("--model", required=required, default=None,
                   help="catalog key (gemma3-270m is bundled), lab/NAME or a directory" +
                        ("" if required else " (default: the one the dictionary's record names)"))
    p.add_argument("--models-dir", default=None, help="where downloaded weights live (else EXPLORER_MODELS_DIR)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_placement(p)


def _sae_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sae", required=True, metavar="DIR", help="the dictionary's folder (ours, SAELens's or "
                                                              "Gemma Scope's)")
    _model_flags(p, required=False)
    p.add_argument("--site", choices=("resid", "attn", "mlp", "heads"), default=None,
                   help="where it reads, for a file that does not say")
    p.add_argument("--layer", type=number(int, 0, 10_000), default=None, help="its layer, for a file that does not say")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sae`` and its sub-commands."""
    top = sub.add_parser("sae", help="sparse autoencoders and transcoders: train, evaluate, inspect, steer")
    cmds = top.add_subparsers(dest="sae_command", required=True)
    t = cmds.add_parser("train", help="harvest activations, train a dictionary, measure it, save it")
    _model_flags(t, required=True)
    t.add_argument("--site", choices=SITES, default="resid", help="where it reads (default resid)")
    t.add_argument("--layer", type=number(int, 0, 10_000), default=None, help="the layer (default: the middle one)")
    t.add_argument("--stack", choices=("encoder", "decoder"), default=None, help="T5/BART: which stack")
    t.add_argument("--kind", choices=KINDS, default="topk", help="topk (default), jumprelu or transcoder")
    t.add_argument("--width", type=number(int, 16, 65_536), default=None, help="features (default 4096)")
    t.add_argument("--k", type=number(int, 1, 4_096), default=None, help="TopK's k (default 32)")
    t.add_argument("--sparsity", type=number(float, 0.0, 10.0), default=None,
                   help="JumpReLU's L0 coefficient (default 0.003)")
    t.add_argument("--tokens", type=number(int, 1_024, 20_000_000), default=None,
                   help="activations harvested for training (default 262,144)")
    t.add_argument("--lr", type=number(float, 1e-6, 1.0), default=None, help="learning rate (default: by width)")
    t.add_argument("--seed", type=number(int, 0, 2**31 - 1), default=None, help="seed (default 0)")
    t.add_argument("--seq-len", type=number(int, 8, 1_024), default=None, help="tokens per window (default 128)")
    t.add_argument("--heldout-tokens", type=number(int, 256, 1_000_000), default=None,
                   help="held-out tokens measured after training (default 8192; the losses on a quarter)")
    t.add_argument("--skip", action="store_true", help="transcoder: add a linear skip")
    t.add_argument("--text-file", default=None, metavar="PATH", help="a UTF-8 text to train on (default: the "
                                                                        "bundled corpus)")
    t.add_argument("--out", default=None, metavar="DIR", help="where to save (default: beside the model)")
    t.set_defaults(func=cmd_train)

    e = cmds.add_parser("evaluate", help="L0, variance explained and loss recovered on this model's held-out text")
    _sae_flags(e)
    e.add_argument("--tokens", type=number(int, 256, 1_000_000), default=8_192, help="held-out tokens (default 8192)")
    e.set_defaults(func=cmd_evaluate)

    f = cmds.add_parser("features", help="the features active at each token of a text")
    _sae_flags(f)
    text_source(f, help="the text")
    f.add_argument("--top", type=number(int, 1, 64), default=8, help="features per token (default 8)")
    f.set_defaults(func=cmd_features)

    d = cmds.add_parser("feature", help="one feature's dashboard: top contexts, density, logit effect")
    _sae_flags(d)
    d.add_argument("--id", type=number(int, 0, 10_000_000), required=True, help="the feature")
    d.add_argument("--tokens", type=number(int, 256, 1_000_000), default=4_096,
                   help="held-out tokens read (default 4096)")
    d.set_defaults(func=cmd_feature)

    s = cmds.add_parser("steer", help="clamp (or ablate: --value 0) a feature; the prediction before and after")
    _sae_flags(s)
    s.add_argument("--id", type=number(int, 0, 10_000_000), required=True, help="the feature")
    s.add_argument("--value", type=number(float, -1e4, 1e4), required=True, help="the activation it is clamped to")
    text_source(s, help="the text")
    s.set_defaults(func=cmd_steer)


def _load(spec: str, models_dir: str | None, args: argparse.Namespace):  # -> LoadedModel
    from explorer.runtime import loading

    ref = resolve(spec, models_dir)
    return loading.load_model(ref, tasks.loading_task(ref), purpose="the feature lab", **placement_of(args).kwargs())


def _saved(args: argparse.Namespace):  # -> (LoadedModel, Saved)
    from explorer.features import folder

    saved = folder.load(args.sae)
    if args.site is not None or args.layer is not None:
        if args.site is None or args.layer is None:
            raise ExplorerError("Give both --site and --layer (where the dictionary reads), or neither.")
        saved = folder.Saved(saved.dictionary, saved.about.with_site(args.site, args.layer), saved.folder,
                             saved.stamp)
    spec = args.model or (saved.about.model if saved.about.format == "explorer" else None)
    if not spec:
        raise ExplorerError(f"This {saved.about.format} file does not name a model of this app: give --model "
                            f"(it says {saved.about.model or 'nothing'}).")
    from explorer.features import pipeline

    loaded = _load(spec, args.models_dir, args)
    pipeline.check_fits(loaded, saved)  # a file made for another model: one line, before any work
    return loaded, saved


def _corpus(path: str | None) -> corpus.Corpus:
    return corpus.from_file(path) if path is not None else corpus.bundled()


def cmd_train(args: argparse.Namespace) -> int:
    """Train and save; progress on stderr, the measured figures at the end."""
    from explorer.features import folder, pipeline

    r = recipe.with_changes(recipe.DEFAULT, kind=args.kind, site=args.site, layer=args.layer, stack=args.stack,
                            width=args.width, k=args.k, sparsity=args.sparsity, tokens=args.tokens, lr=args.lr,
                            seed=args.seed, skip=args.skip or None, seq_len=args.seq_len,
                            heldout_tokens=args.heldout_tokens,
                            ce_tokens=None if args.heldout_tokens is None else max(64, args.heldout_tokens // 4))
    if args.out is not None:
        folder.check_out(args.out)  # before any model loads: a folder of the user's is never replaced
    text = _corpus(args.text_file)
    loaded = _load(args.model, args.models_dir, args)
    with Ticker() as ticker:
        def progress(fraction: float, what: str) -> None:
            ticker.say(f"{what} ({fraction:.0%}, {eta(ticker.elapsed, fraction)} left)")
        trained, _ = pipeline.train(loaded, r, text, progress=progress, out=args.out)
    if args.json:
        print_json(trained.to_dict())
        return 0
    f = trained.fidelity
    print(f"== {trained.about.kind} on the {trained.about.where} of {args.model}: {trained.report.steps} steps, "
          f"{trained.tokens:,} tokens; saved in {trained.folder}")
    print(f"   L0 {f.l0:.1f}  FVE {f.fve:.3f}  CE recovered "
          f"{'n/a' if f.ce_recovered is None else f'{f.ce_recovered:.3f}'}  dead {f.dead_fraction:.1%}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    """The dictionary measured on this model's held-out text, beside what its file claims."""
    from explorer.features import pipeline

    loaded, saved = _saved(args)
    f = pipeline.evaluate(loaded, saved, _corpus(None), tokens=args.tokens)
    out = {**f.to_dict(), "where": saved.about.where, "format": saved.about.format, "claims": saved.about.claims}
    if args.json:
        print_json(out)
        return 0
    print(f"== {saved.about.where} ({saved.about.format}, {saved.dictionary.width:,} features) on {loaded.key}")
    for key in ("l0", "fve", "ce_clean", "ce_spliced", "ce_zero", "ce_recovered", "dead_fraction", "dense_fraction"):
        print(f"   {key:>15}: {out[key]}")
    return 0


def cmd_features(args: argparse.Namespace) -> int:
    """Each token with its most active features."""
    from explorer.features import active

    loaded, saved = _saved(args)
    result = active.active(loaded, saved, read_source(args), top=args.top)
    if args.json:
        print_json(result.to_dict())
        return 0
    for t in result.tokens:
        shown = "  ".join(f"{f}:{a:.2f}" for f, a in t.features) or "-"
        print(f"  {t.position:>4} {t.token!r:>16}  {shown}")
    return 0


def cmd_feature(args: argparse.Namespace) -> int:
    """One feature's dashboard."""
    from explorer.features import dashboard, sample

    loaded, saved = _saved(args)
    saved.dictionary.direction(args.id)  # out of range: one line before the held-out text is read
    card = dashboard.card(loaded, saved, sample.of(loaded, saved, _corpus(None), args.tokens), args.id)
    if args.json:
        print_json(card.to_dict())
        return 0
    print(f"== feature {card.feature}: active on {card.density:.2%} of {card.tokens:,} tokens, max {card.max_act:.2f}")
    for c in card.top[:5]:
        print(f"   {c.value:8.2f}  {''.join(c.tokens)!r}")
    print(f"   raises: {', '.join(t for t, _ in card.raises)}")
    print(f"   lowers: {', '.join(t for t, _ in card.lowers)}")
    return 0


def cmd_steer(args: argparse.Namespace) -> int:
    """The prediction before and after the clamp."""
    from explorer.features import clamp

    loaded, saved = _saved(args)
    result = clamp.clamp(loaded, saved, args.id, args.value, read_source(args))
    if args.json:
        print_json(result.to_dict())
        return 0
    print(f"== feature {result.feature} clamped to {result.value:g}: {result.read} (KL {result.kl:.4f})")
    for (a, p), (b, q) in zip(result.before, result.after, strict=True):
        print(f"   {a!r:>16} {p:.4f}    {b!r:>16} {q:.4f}")
    return 0
