"""CLI of the pretraining lab: ``pretrain`` (train one objective, save it) and ``pretrain-compare``.

    python -m explorer pretrain mlm --steps 300 --json          # saved in <models folder>/lab/mlm-tiny-300steps-seed0
    python -m explorer fill-mask --models lab/mlm-tiny-300steps-seed0 --text "Lists are [MASK] sequences."
    python -m explorer pretrain-compare mlm roberta albert --steps 100 --json
    python -m explorer pretrain mlm --steps 300 --exits         # + FastBERT exits, for
                                                                # `compress lab/NAME --method exit-0.3`

Progress goes to stderr (a line every ~5% of the steps, and at least every few seconds, inside a long
accumulated step too, with counts, elapsed time and time left); stdout gets the summary (``--json``:
``explorer.training.trainer.summary``). Ctrl-C stops the run: nothing half-written is left and the exit code
is 130. Bad input (steps 0 or 10^9, an unknown objective, an empty/binary/huge text file, CUDA on a machine
without it) is one line on stderr and exit code 2, like every command.

The paths come first, before any heavy import: the output folder is tested writable and the text file read and
checked (a FIFO, a device, a binary or huge file is refused in a moment). Memory is planned before a model is
built (:mod:`explorer.training.stepmemory`): the longest
``--seq-len`` and the most ``--batch-tokens`` follow from this machine's memory budget. A step too large for
one pass is run as micro-batches with accumulated gradients (a ``note:`` line says so); one that does not fit
even so is refused with the figure and the largest setting that fits.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.cli import placement_of, print_json
from explorer.cli.argtypes import number
from explorer.cli.progress import Ticker, eta
from explorer.core.errors import ExplorerError
from explorer.core.userfiles import MAX_UPLOAD_MB
from explorer.runtime import weights
from explorer.training import corpus, recipes, stepmemory

if TYPE_CHECKING:  # the trainer imports torch: only a command that trains pays for it
    from explorer.training.session import Hooks, Session
    from explorer.training.trainer import Plan, Progress

__all__ = ["MAX_COMPARED", "register"]

MAX_COMPARED = len(recipes.RECIPES)  # each objective once
INTERRUPTED = 130  # the shell's code for a process stopped by Ctrl-C (SIGINT)
_REPORTS = 20  # progress lines per run: one every ~5% of the steps


def _steps(text: str) -> int:
    from explorer.training.trainer import MAX_STEPS  # imports torch: read when the option is used

    return int(number(int, 1, MAX_STEPS)(text))


def _device(args: argparse.Namespace) -> str:
    """The device to train on: auto picks CUDA, then MPS, then the CPU; an unavailable one is refused."""
    device, _ = placement_of(argparse.Namespace(device=args.device, dtype=None)).resolve()
    return device


def _corpus(args: argparse.Namespace) -> corpus.Corpus | None:
    """The user's text file (checked: size, binary, UTF-8, enough words), else None (the bundled corpus)."""
    return corpus.from_file(args.text_file) if args.text_file is not None else None


def _plan(args: argparse.Namespace, objective: str, device: str) -> Plan:
    """The checked plan, its memory planned (refused here when it cannot fit; a note when it is accumulated)."""
    from explorer.training.trainer import Plan

    plan = Plan(objective, size=args.size, steps=args.steps, seed=args.seed, device=device,
                batch_tokens=args.batch_tokens, seq_len=args.seq_len, eval_windows=args.eval_windows).checked()
    step = stepmemory.step_plan(plan)
    if step.notice:
        print(f"note: [{plan.objective}] {step.notice}", file=sys.stderr, flush=True)
    return plan


def _reporter(prefix: str, ticker: Ticker) -> Callable[[Progress], None]:
    """A progress callback printing step, loss, tokens, elapsed and time left every ~5% of the steps and whenever
    the ticker is due (inside an accumulated step: which micro-batch it is at); between reports the ticker's
    heartbeat repeats where the run is, with fresh times."""
    started = ticker.clock()

    def report(p: Progress) -> None:
        done = p.step + (p.part[0] / p.part[1] if p.part else 0.0)  # steps done, a running step's passes counted

        def status(_: float) -> str:  # the heartbeat's line while this step (or pass) runs
            elapsed = ticker.clock() - started
            part = f", micro-batch {p.part[0] + 1:,}/{p.part[1]:,}" if p.part else ""
            return (f"… {prefix}step {min(p.step + 1, p.steps):,}/{p.steps:,} still running{part}  "
                    f"elapsed {elapsed:.0f} s  ETA {eta(elapsed, done / p.steps)}")
        ticker.status = status
        every = max(1, p.steps // _REPORTS)
        if not (ticker.due() or p.part is None and (p.step % every == 0 or p.step == p.steps)):
            return
        elapsed = ticker.clock() - started
        held = f", held-out {p.eval['loss']:.3f}" if p.eval else ""
        where = f"step {p.step:,}/{p.steps:,} ({p.step / p.steps:4.0%})"
        if p.part is not None:
            where = f"step {p.step + 1:,}/{p.steps:,}: micro-batch {p.part[0]:,}/{p.part[1]:,}"
        ticker.say(f"{prefix}{where}  loss {p.loss:.3f}{held}  tokens {p.tokens_seen:,}  elapsed {elapsed:.0f} s  "
                   f"ETA {eta(elapsed, done / p.steps)}")
    return report


def _phase(ticker: Ticker, text: str) -> None:
    """Say what the command does now; the heartbeat repeats it with the time spent while it lasts."""
    started = ticker.clock()
    ticker.say(text)
    ticker.status = lambda _: f"… {text}: still running, {ticker.clock() - started:.0f} s so far"


def _fractions(ticker: Ticker, prefix: str) -> Callable[[float, str], None]:
    """A ``(fraction, text)`` progress callback (the probe, FastBERT's exits): a line every 10% or when due."""
    started, tenth = ticker.clock(), [-1]

    def report(fraction: float, text: str) -> None:
        def status(_: float) -> str:
            elapsed = ticker.clock() - started
            return f"… {prefix}{text} ({fraction:.0%})  elapsed {elapsed:.0f} s  ETA {eta(elapsed, fraction)}"
        ticker.status = status
        if int(fraction * 10) > tenth[0] or ticker.due():
            tenth[0] = int(fraction * 10)
            elapsed = ticker.clock() - started
            ticker.say(f"{prefix}{text} ({fraction:.0%})  elapsed {elapsed:.0f} s  ETA {eta(elapsed, fraction)}")
    return report


def _hooks(ticker: Ticker, out: str | Path | None, prefix: str = "") -> Hooks:
    """The session's stages as progress lines: what it does now (the heartbeat repeats it with the time spent),
    each training step every ~5%, the probe's and the exits' fractions."""
    from explorer.training import downstream, lossfamilies, models, sections
    from explorer.training.session import Hooks

    def state(session: Session) -> None:
        plan, run = session.plan, session.run
        if session.state == "building":
            teacher = lossfamilies.get(recipes.get(plan.objective).loss).teacher
            if teacher and not plan.teacher:
                ticker.say(f"{prefix}training its teacher first ({teacher}, {plan.steps:,} steps)")
            _phase(ticker, f"{prefix}preparing: cutting the text into {plan.seq_len}-token windows, building the model")
        elif session.state == "training" and run is not None:
            _phase(ticker, f"{prefix}training {run.recipe.label}, {plan.size}, {models.parameters(run.model):,} "
                           f"parameters, {plan.steps:,} steps of {plan.batch_tokens:,} tokens on {plan.device} "
                           "(Ctrl-C stops)")
        elif session.state == "saving":
            _phase(ticker, "exits: saving them beside the checkpoint" if session.exits is not None
                   else f"{prefix}saving the checkpoint to {out}")
        elif session.state == "probing":
            _phase(ticker, f"{prefix}probing: fine-tuning a copy on \"{downstream.TASK}\"")
        elif session.state == "exits":
            _phase(ticker, f"exits: training FastBERT's exit classifiers on \"{sections.TASK}\"")

    fractions = {"probing": _fractions(ticker, f"{prefix}probing: "), "exits": _fractions(ticker, "exits: ")}
    current: dict[str, Session] = {}

    def fraction(share: float, text: str) -> None:
        fractions[current["session"].state](share, text)

    def entered(session: Session) -> None:
        current["session"] = session
        state(session)

    return Hooks(state=entered, teacher=_reporter(f"{prefix}teacher: ", ticker), progress=_reporter(prefix, ticker),
                 fraction=fraction)


def _session(plan: Plan, text: corpus.Corpus | None, probe: bool, exits: bool,
             exit_steps: int | None = None) -> Session:
    """The plan's session: the downstream probe and FastBERT's exits follow training when asked for (``exit_steps``:
    each of the exits' two stages, else the default spec's)."""
    from explorer.training import downstream
    from explorer.training import exits as exit_classifiers
    from explorer.training.session import Session

    spec = exit_classifiers.DEFAULT_SPEC
    if exit_steps is not None:
        spec = replace(spec, steps=exit_steps, distill_steps=exit_steps).checked()
    return Session(plan, text, downstream.DEFAULT_SPEC if probe else None, spec if exits else None)


def _describe(summary: dict[str, Any]) -> str:
    """A few lines a person reads: size, budget, held-out loss and accuracy first -> last, where it is saved."""
    first, last = summary["eval"]["first"] or {}, summary["eval"]["last"] or {}
    lines = [f"{summary['objective']} ({summary['size']}): {summary['params']:,} parameters, {summary['steps']:,} "
             f"steps, {summary['tokens_seen']:,} tokens, {summary['flops']:.3g} FLOPs, {summary['seconds']:.1f} s",
             f"  held-out loss {first.get('loss', 0):.3f} -> {last.get('loss', 0):.3f}, masked-token accuracy "
             f"{first.get('accuracy', 0):.1%} -> {last.get('accuracy', 0):.1%}"]
    if summary.get("out"):
        lines.append(f"  saved to {summary['out']}")
    return "\n".join(lines)


def _spec(saved: Path, models_dir: str | None) -> str:
    """How to name a saved model: lab/NAME when it is in the models folder's lab/, else its folder."""
    if saved.parent == weights.lab_root(models_dir).absolute():
        return f"{weights.LAB_PREFIX}{saved.name}" + (f" --models-dir {models_dir}" if models_dir else "")
    return str(saved)


def _interrupted(what: str) -> int:
    print(f"error: interrupted (Ctrl-C) {what}; nothing half-written was left. Run the command again to train.",
          file=sys.stderr)
    return INTERRUPTED


def _interrupted_at(session: Session) -> int:
    """What a Ctrl-C left, said by the stage it stopped."""
    if session.saved is not None:
        return _interrupted(f"after training: the checkpoint is saved in {session.saved}, its probe or exits are not")
    if session.state == "saving":
        return _interrupted("while saving: the checkpoint was not written")
    return _interrupted("during training, nothing was saved")


def _out(args: argparse.Namespace, objective: str) -> Path:
    """The checkpoint folder of ``objective``'s run (``--out``, else its folder in the models folder's lab/), checked
    writable (a probe file made and removed) before any heavy import: not after seconds of imports or minutes of
    training."""
    from explorer.training import checkpoint

    given = getattr(args, "out", None)  # pretrain-compare names no folder: each run gets its default one
    if given is not None:
        return checkpoint.target_of(given)
    return checkpoint.target_of(checkpoint.default_out(objective, args.size, args.steps, args.seed, args.models_dir))


def _pretrain(args: argparse.Namespace) -> int:
    # the paths first (the output folder, the text file: a FIFO, a device, a binary or huge file), with no heavy
    # import: a refusal takes a moment, not the seconds torch and the memory plan take
    if args.exit_steps is not None and not args.exits:  # before any work: the flag alone would do nothing
        raise ExplorerError("--exit-steps sets how long FastBERT's exits train: add --exits, or leave it out.")
    out = _out(args, args.objective)
    text = _corpus(args)
    plan = _plan(args, args.objective, _device(args))
    session = _session(plan, text, args.probe, args.exits, args.exit_steps)
    with Ticker() as ticker:
        try:
            session.execute(_hooks(ticker, out), save_to=out)
        except KeyboardInterrupt:
            return _interrupted_at(session)
        ticker.status = None
    if session.exits_error:  # e.g. a one-layer DistilBERT student: nothing to exit from
        raise ExplorerError(f"{session.exits_error} The checkpoint itself is saved in {session.saved}; its exits are "
                            "not.")
    summary = session.record().to_dict()
    if args.json:
        print_json(summary)
        return 0
    saved = session.saved
    assert saved is not None
    print(_describe(summary))
    print(f'  try: python -m explorer fill-mask --models {_spec(saved, args.models_dir)} '
          '--text "A list is a [MASK] of items."')
    if args.exits:
        layers = ", ".join(f"{a:.1%}" for a in summary["exits"]["layer_accuracy"])
        print(f"  exits: accuracy after each layer {layers} on \"{summary['exits']['task']}\"")
        print(f"  try: python -m explorer compress {_spec(saved, args.models_dir)} --method exit-0.2 --method exit-0.5")
    return 0


def _compare(args: argparse.Namespace) -> int:
    names = list(dict.fromkeys(recipes.get(o).name for o in args.objectives))
    if len(names) < 2:
        raise ExplorerError("Name at least two different objectives to compare (for example: mlm roberta).")
    outs = [_out(args, name) if args.save else None for name in names]  # paths first, before any heavy import
    text = _corpus(args)
    device = _device(args)
    plans = [_plan(args, name, device) for name in names]  # every objective checked before the first trains
    done: list[dict[str, object]] = []
    with Ticker() as ticker:
        try:
            for plan, out in zip(plans, outs, strict=True):
                session = _session(plan, text, not args.no_probe, False)
                session.execute(_hooks(ticker, out, prefix=f"[{plan.objective}] "), save_to=out)
                done.append(session.record().to_dict())
        except KeyboardInterrupt:  # the runs that finished are printed (and stay saved with --save)
            _print_runs(done, args.json)
            return _interrupted(f"after {len(done)} of {len(plans)} runs: the finished ones are printed above")
        ticker.status = None
    _print_runs(done, args.json)
    return 0


def _print_runs(done: list[dict[str, object]], as_json: bool) -> None:
    if as_json:
        print_json(done)
    elif done:
        print("\n".join(_describe(s) for s in done))


def _objective(text: str) -> str:
    """An objective name or alias (recipes.get says which exist), cut when echoed."""
    try:
        return recipes.get(text).name
    except ExplorerError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--size", choices=tuple(recipes.SIZES), default="tiny", help="tiny (default) or small")
    p.add_argument("--steps", type=_steps, default=300, help="optimizer steps (default 300)")
    p.add_argument("--seed", type=number(int, 0, 2**31 - 1), default=0, help="the same seed gives the same run")
    p.add_argument("--device", default=None, metavar="{auto,cpu,cuda,mps}",
                   help="where to train (default auto: CUDA, then Apple MPS, then the CPU)")
    p.add_argument("--text-file", metavar="FILE", help="train on this UTF-8 text instead of the bundled corpus "
                   f"(at least 2,000 words, at most {MAX_UPLOAD_MB} MB)")
    p.add_argument("--batch-tokens", type=number(int, 16, 2**40), default=2048,
                   help="input tokens per step, the same for every objective (default 2,048); the most that fits "
                        "this machine's memory is checked before training (a step too large for one pass is "
                        "accumulated over micro-batches)")
    p.add_argument("--seq-len", type=number(int, 16, 512), default=128,
                   help="tokens per window (default 128; at most 512, the models' positions, and what fits memory)")
    p.add_argument("--eval-windows", type=number(int, 1, 10_000), default=64,
                   help="held-out windows per evaluation (default 64)")
    p.add_argument("--models-dir", default=None, help="models folder whose lab/ holds the checkpoints "
                   "(else EXPLORER_MODELS_DIR, else the explorer's cache)")
    p.add_argument("--json", action="store_true", help="machine-readable summary on stdout")


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""
    p = sub.add_parser("pretrain", help="train a tiny model with one objective and save it as a local model")
    p.add_argument("objective", type=_objective, help=f"one of {', '.join(recipes.RECIPES)}")
    _common(p)
    p.add_argument("--out", default=None, metavar="DIR", help="where to save (default: <models folder>/lab/"
                   "OBJECTIVE-SIZE-STEPSsteps-seedSEED, listed on the live pages as lab/NAME)")
    p.add_argument("--probe", action="store_true", help="also fine-tune a copy on the downstream probe (eval.probe)")
    p.add_argument("--exits", action="store_true", help="also train FastBERT's early-exit classifiers on a copy and "
                   "save them with the checkpoint (for compress lab/NAME --method exit-S)")
    p.add_argument("--exit-steps", type=number(int, 1, 10_000), default=None, metavar="N",
                   help="with --exits: steps of each of the exits' two training stages, the teacher's then the "
                        "students' (default 100 each)")
    p.set_defaults(func=_pretrain)

    c = sub.add_parser("pretrain-compare", help="train several objectives on the same token budget, side by side")
    c.add_argument("objectives", nargs="+", type=_objective, metavar="OBJECTIVE",
                   help=f"two or more of {', '.join(recipes.RECIPES)}")
    _common(c)
    c.add_argument("--save", action="store_true", help="also save each model in <models folder>/lab/")
    c.add_argument("--no-probe", action="store_true", help="skip the downstream probe (eval.probe is then null)")
    c.set_defaults(func=_compare)

