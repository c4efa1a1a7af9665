"""CLI of the Evaluate page: ``evaluate`` (a task or a text's perplexity) and ``project`` (an embedding projector).

    python -m explorer evaluate --model gemma3-270m --task assets/evaluation/cloze.jsonl --json
    python -m explorer evaluate --model gemma3-270m --text-file assets/evaluation/perplexity.txt --metric perplexity
    python -m explorer evaluate --endpoint gemma --task my_task.jsonl --json        # a served model
    python -m explorer project --model sentence-bert --text-file assets/evaluation/sentences.txt --method pca --json

``evaluate`` prints ``{"model", "accuracy", "examples": [{"index", "choice", "correct", "scores"}]}`` for a task
(multiple choice or cloze, JSONL in lm-evaluation-harness's shapes) or ``{"model", "perplexity", "tokens"}`` for a
text (more keys beside them: the interval, ``acc_norm``, the method, where it ran). ``project`` prints
``{"model", "method", "points": [[x, y], ...]}``. Files are checked line by line before any model loads; the
command line has no time budget, and its progress goes to stderr.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from explorer.cli import add_placement, placement_of, print_json
from explorer.cli.argtypes import number, seed
from explorer.cli.progress import Ticker
from explorer.cli.served import add_endpoint_flags, endpoint_from_args
from explorer.core.errors import ExplorerError
from explorer.core.notices import texts
from explorer.evaluation import taskfile
from explorer.evaluation.task import Task
from explorer.runtime.resolve import resolve

if TYPE_CHECKING:  # typing only: the results import numpy and torch
    from explorer.evaluation.perplexity import Perplexity
    from explorer.evaluation.report import Report
    from explorer.evaluation.score import Scorer

__all__ = ["cmd_evaluate", "cmd_project", "register"]

METHODS = ("pca", "tsne", "umap")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``evaluate`` and ``project``."""
    p = sub.add_parser("evaluate", help="score a model on a JSONL task (multiple choice, cloze) or a text's "
                                        "perplexity (Evaluate page)")
    p.add_argument("--model", required=True, help="catalog key, lab/NAME or directory: a decoder, a masked LM "
                                                  "(pseudo-log-likelihood) or an encoder-decoder")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--task", metavar="FILE.jsonl", help='one example a line: {"context", "choices", "answer"} '
                                                            'or {"context", "continuation"}')
    which.add_argument("--text-file", metavar="FILE", help="a UTF-8 text whose perplexity to measure")
    p.add_argument("--metric", choices=("accuracy", "perplexity"), default=None,
                   help="perplexity with --text-file (its only metric); accuracy with --task (the default)")
    p.add_argument("--window", type=number(int, 2, 32_768), default=None,
                   help="tokens per rolling window (default: the model's context, at most 2,048)")
    p.add_argument("--limit", type=number(int, 1, taskfile.MAX_EXAMPLES), default=None,
                   help="score only the first N examples")
    _common(p)
    p.set_defaults(func=cmd_evaluate)
    q = sub.add_parser("project", help="sentence embeddings (or one layer's token states) projected to 2-D/3-D")
    q.add_argument("--model", required=True, help="catalog key or directory (sentence-bert, gemma3-270m, ...)")
    q.add_argument("--text-file", required=True, metavar="FILE", help="one text a line")
    q.add_argument("--method", choices=METHODS, default="pca", help="PCA, t-SNE (scikit-learn) or UMAP (umap-learn)")
    q.add_argument("--dims", type=int, choices=(2, 3), default=2, help="2-D or 3-D")
    q.add_argument("--layer", type=number(int, 0, 1_000), default=None,
                   help="one layer's states (0: the embeddings) instead of the final ones")
    q.add_argument("--tokens", action="store_true", help="a point per token (that layer's states), not per text")
    q.add_argument("--seed", type=seed(), default=0, help="t-SNE's and UMAP's seed: one seed, one picture")
    _common(q)
    q.set_defaults(func=cmd_project)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--models-dir", default=None, help="where to look for weights (default: EXPLORER_MODELS_DIR)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_placement(p)
    add_endpoint_flags(p)


def _scorer(args: argparse.Namespace) -> Scorer:
    from explorer.evaluation.scorer import scorer_for

    ep = endpoint_from_args(args)
    if ep is not None:
        return scorer_for(ep)
    where = placement_of(args).kwargs()  # a device this machine lacks: refused before the model is named
    return scorer_for(resolve(args.model, args.models_dir), **where)


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Score the task (or the text) and print the accuracy and every example (or the perplexity)."""
    if args.text_file is not None and args.metric not in (None, "perplexity"):
        raise ExplorerError("--text-file measures perplexity: drop --metric accuracy, or give --task FILE.jsonl.")
    if args.task is not None and args.metric == "perplexity":
        raise ExplorerError("--metric perplexity reads a text: give --text-file FILE instead of --task.")
    if args.task is not None:
        task = taskfile.read_task(args.task)  # every line checked before a model loads
        task = task.head(args.limit) if args.limit else task
        return _task(args, task)
    return _perplexity(args, taskfile.read_text(args.text_file))


def _task(args: argparse.Namespace, task: Task) -> int:
    from explorer.evaluation import report, run

    with Ticker() as ticker:
        ticker.status = lambda s: f"evaluate: loading the model, {s:.0f} s"
        scorer = _scorer(args)
        ticker.status = lambda s: f"evaluate: scoring {len(task.examples):,} examples with {scorer.key}, {s:.0f} s"
        result = run.score_task(scorer, task, progress=lambda f, what: ticker.say(f"{f:6.1%}  {what}")
                                if ticker.due() else None)
    rep = report.build(task, [result])
    if args.json:
        print_json(_task_json(rep, task))
        return 0
    _print_task(rep, task)
    return 0


def _task_json(rep: Report, task: Task) -> dict[str, object]:
    run, summary = rep.runs[0], rep.summaries[0]
    body = run.to_dict(task)
    known = summary.acc.total > 0  # else no example could be decided (each is said by a notice)
    return {"model": run.model, "task": task.name, "kind": task.kind,
            "accuracy": round(summary.acc.value, 6) if known else None,
            "interval": [round(summary.acc.low, 6), round(summary.acc.high, 6)],
            "acc_norm": round(summary.acc_norm.value, 6) if summary.acc_norm else None,
            "perplexity": None if not math.isfinite(summary.perplexity) else round(summary.perplexity, 6),
            "metrics": {m.metric: {"value": round(m.value, 6) if math.isfinite(m.value) else None,
                                   "interval": None if m.low is None or m.high is None else [round(m.low, 6),
                                                                                             round(m.high, 6)],
                                   "examples": m.examples} for m in summary.measures},
            **{k: v for k, v in body.items() if k not in ("model", "kind")}, "notices": texts(rep.notices)}


def _print_task(rep: Report, task: Task) -> None:
    for note in rep.notices:
        print(f"note: {note}")
    run, s = rep.runs[0], rep.summaries[0]
    norm = f" · acc_norm {s.acc_norm.value:.3f}" if s.acc_norm is not None else ""
    print(f"{run.model} on {task.name} ({task.kind}): accuracy {s.acc.value:.3f} (95% interval {s.acc.low:.3f}-"
          f"{s.acc.high:.3f}){norm} · {s.scored} of {s.total} examples · {run.seconds:.1f} s")
    from explorer.evaluation import metrics  # numpy: only when a report is printed

    others = [f"{metrics.METRICS[m.metric].label} {m.value:.3f}" for m in s.measures
              if metrics.METRICS[m.metric].interval != "wilson" and math.isfinite(m.value)]
    if others:
        print(" · ".join(others))
    print(f"scored by {run.method}")
    print("  line  choice  right  scores")
    for ex in run.examples:
        mark = {True: "yes", False: "no", None: "?"}[run.correct(ex.index, task.examples[ex.index].answer)]
        picked = run.choice(ex.index)
        print(f"{task.examples[ex.index].line:>6} {'?' if picked is None else picked:>7}  {mark:>5}  "
              + " ".join(f"{v:.3f}" if math.isfinite(v) else "null" for v in ex.scores))


def _perplexity(args: argparse.Namespace, text: str) -> int:
    from explorer.evaluation import perplexity

    with Ticker() as ticker:
        ticker.status = lambda s: f"evaluate: loading the model, {s:.0f} s"
        scorer = _scorer(args)
        ticker.say(f"note: perplexity of {perplexity.estimate(scorer, text, args.window).said}")  # before the work
        ticker.status = lambda s: f"evaluate: perplexity with {scorer.key}, {s:.0f} s"
        res = perplexity.perplexity(scorer, text, args.window,
                                    progress=lambda f, what: ticker.say(f"{f:6.1%}  {what}") if ticker.due() else None)
    if args.json:
        print_json(res.to_dict())
        return 0
    _print_perplexity(res)
    return 0


def _print_perplexity(res: Perplexity) -> None:
    for note in res.notices:
        print(f"note: {note}")
    print(f"{res.model}: perplexity {res.perplexity:.3f} over {res.tokens:,} tokens in {res.windows} window(s) of "
          f"at most {res.window:,} · {res.seconds:.1f} s")
    if not math.isnan(res.word_perplexity):
        print(f"word perplexity {res.word_perplexity:.3f} · bits per byte {res.bits_per_byte:.4f} (lm-eval's)")
    print(f"scored by {res.method}")


def cmd_project(args: argparse.Namespace) -> int:
    """Embed every line of the file and print the projected points."""
    from explorer.evaluation import projector, vectors
    from explorer.runtime.loading import load_model

    lines = taskfile.read_lines(args.text_file)  # checked before a model loads
    ep = endpoint_from_args(args)
    if ep is not None and (args.tokens or args.layer is not None):
        raise ExplorerError("A served model sends one vector per text (/v1/embeddings): drop --tokens and --layer.")
    with Ticker() as ticker:
        ticker.status = lambda s: f"project: embedding {len(lines):,} texts, {s:.0f} s"
        if ep is not None:
            vec = vectors.served(ep, lines)
        else:
            loaded = load_model(resolve(args.model, args.models_dir), **placement_of(args).kwargs())
            make = vectors.tokens if args.tokens else vectors.sentences
            vec = make(loaded, lines, args.layer)
        ticker.status = lambda s: f"project: {args.method} of {len(vec.labels):,} points, {s:.0f} s"
        res = projector.project(vec, args.method, args.dims, args.seed)
    if args.json:
        print_json(res.to_dict())
        return 0
    for note in res.notices:
        print(f"note: {note}")
    print(f"{res.model}: {len(res.points):,} points by {args.method} ({res.how}) · {res.seconds:.1f} s")
    for label, row in zip(res.labels, res.points, strict=True):
        print("  " + " ".join(f"{v:9.4f}" for v in row) + f"  {label[:70]}")
    return 0

