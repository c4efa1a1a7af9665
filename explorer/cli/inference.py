"""CLI of the live-model area: ``fill-mask``, ``download``, ``models`` and ``prepare``.

    python -m explorer fill-mask --models bert-base,./my-model --text "Paris is the [MASK] of France." --json
    python -m explorer fill-mask --models bert-base --text-file prompts.txt --jsonl  # one prompt per line, streamed
    python -m explorer fill-mask --models bert-base --endpoint gemma --text "Paris is the ___ of France."
    python -m explorer download electra-small ...
    python -m explorer models --json
    python -m explorer prepare          # convert the bundled decoder, fill the caches (make run does it)
"""

from __future__ import annotations

import argparse
import json
import sys

from explorer.cli import add_placement, placement_of, print_json
from explorer.cli.argtypes import number
from explorer.cli.progress import Ticker, eta
from explorer.cli.served import add_endpoint_flags, endpoint_from_args
from explorer.cli.textinput import read_stdin, read_text_file
from explorer.core.errors import ExplorerError, shorten
from explorer.runtime import weights
from explorer.runtime.download import download
from explorer.runtime.warmup import prepare

__all__ = ["register"]


def _fill_mask(args: argparse.Namespace) -> int:
    from explorer.tasks.fillmask import fill_mask

    ep = endpoint_from_args(args)  # a served decoder: one more (causal) column
    specs = [s for s in (args.models or "").split(",") if s.strip()]
    if args.jsonl and args.text_file is None:
        raise ExplorerError("--jsonl streams the answers of a file of prompts: give --text-file FILE (for one --text, "
                            "use --json).")
    if args.text_file is not None:
        if ep is not None:
            raise ExplorerError("A served decoder answers one prompt (--text): it scores every candidate with one "
                                "request, so a file of prompts would take minutes per line.")
        return _fill_mask_file(args, specs)
    result = fill_mask(specs, args.text, args.top_k, random_weights=args.random_weights,
                       models_dir=args.models_dir, answer_tokens=args.decoder_tokens,
                       **placement_of(args).kwargs()) if specs else None
    if ep is not None:
        from explorer.serving import fillin

        result = fillin.beside(result, [ep], args.text, args.top_k, args.decoder_tokens)
    if result is None:  # endpoint_from_args asked for one already; kept for the type checker
        raise ExplorerError("Give --models, or --endpoint NAME / --base-url URL.")
    if result.models:
        _print_fill(result, args.json)
    for spec, message in result.errors:  # one line per model that could not answer
        print(f"error: {shorten(spec)}: {message}", file=sys.stderr)
    return 2 if result.errors else 0


def _fill_mask_file(args: argparse.Namespace, specs: list[str]) -> int:
    """One prompt per line of ``--text-file`` (``-``: standard input), answered in chunks that are printed as they
    finish: ``--jsonl`` one JSON object per prompt, flushed, so a 10,000-prompt file gives results from the first
    seconds and Ctrl-C keeps every line already printed (exit 130); progress with time left on stderr.
    ``--json`` prints one list at the end, in input order."""
    from explorer.tasks.fillmask.batch import (
        MAX_FILE_PROMPTS,
        STREAM_CHUNK,
        fill_mask_stream,
        prompt_lines,
        refuse_binary,
    )

    text = read_stdin("--text-file -") if args.text_file == "-" else read_text_file(args.text_file, "--text-file")
    text = refuse_binary(text, "--text-file")
    total = len(prompt_lines(text, MAX_FILE_PROMPTS)[0])  # no prompts: one message before any model loads
    done, refused = 0, 0
    errors: dict[tuple[str, str], int] = {}  # (model, message): chunks it failed in
    everything: list[dict] = []  # --json's list
    with Ticker() as ticker:
        ticker.status = lambda s: f"fill-mask: {done:,}/{total:,} prompts, {s:.0f} s (loading or answering the " \
                                  f"next {min(STREAM_CHUNK, total - done):,})"
        for chunk in fill_mask_stream(specs, text, args.top_k, random_weights=args.random_weights,
                                      models_dir=args.models_dir, answer_tokens=args.decoder_tokens,
                                      chunk=STREAM_CHUNK, limit=MAX_FILE_PROMPTS, **placement_of(args).kwargs()):
            for note in chunk.notices:
                ticker.say(f"note: {note}")
            _print_chunk(args, chunk, everything)
            done += len(chunk.prompts)
            refused += sum(1 for p in chunk.prompts if p.error)
            for p in chunk.prompts:
                if p.error:
                    ticker.say(f"error: line {p.line}: {p.error}")
            for key in chunk.model_errors():
                errors.setdefault(key, 0)
                errors[key] += 1
            ticker.say(f"fill-mask: {done:,}/{total:,} prompts ({done / max(total, 1):.0%}), {ticker.elapsed:.0f} s, "
                       f"{eta(ticker.elapsed, done / max(total, 1))} left")
    if args.json:
        print_json(everything)
    for (spec, message) in errors:  # once per model
        print(f"error: {spec}: {message}", file=sys.stderr)
    return 2 if refused or errors else 0


def _print_chunk(args: argparse.Namespace, chunk, everything: list) -> None:
    """One answered chunk on stdout now (``--jsonl``, text), or kept for ``--json``'s list."""
    if args.json:
        everything.extend(chunk.to_list())
        return
    for p in chunk.prompts:
        if args.jsonl:
            print(json.dumps(p.to_dict(), ensure_ascii=False))
        elif p.result is not None:
            print(f"## line {p.line}: {p.prompt}")
            _print_fill(p.result, False)
    sys.stdout.flush()


def _print_fill(result, as_json: bool) -> None:
    if as_json:
        print_json(result.to_dict())
        return
    for fill in result.models:
        label = " (untrained: random weights)" if fill.untrained else ""
        print(f"== {fill.name}{label}  [{fill.device_name} · {fill.dtype}, {fill.latency_ms:.0f} ms]")
        if fill.notices:
            print(f"   note: {' '.join(str(n) for n in fill.notices)}")
        for mask in fill.masks:
            shown = ", ".join(f"{p.word} {p.score:.3g}" for p in mask.predictions)
            print(f"   mask {mask.index + 1}: {shown}")


def _download(args: argparse.Namespace) -> int:
    def progress(fraction: float, what: str) -> None:
        print(f"{fraction:6.1%}  {what}", file=sys.stderr)

    done = [download(key, args.models_dir, progress).to_dict() for key in args.keys]
    print_json(done)
    return 0


def _models(args: argparse.Namespace) -> int:
    from explorer.runtime.loading import best_device  # imports torch at its top

    rows = weights.status_all(args.models_dir)
    if args.json:
        print_json({"device": best_device(), "models": [r.to_dict() for r in rows]})
        return 0
    print(f"device: {best_device()}")
    for r in rows:
        size = f"{r.disk_bytes / 2**20:8.1f} MB" if r.disk_bytes else " " * 11
        where = f"{r.source}: {r.path}" if r.status == "ready" else (r.message if r.status == "error" else "")
        print(f"{r.key:28} {r.status:12} {size}  {where}")
    print("Get missing weights with `python -m explorer download KEY`, the Models page, or EXPLORER_MODELS_DIR.")
    return 0


def _prepare(args: argparse.Namespace) -> int:
    def progress(fraction: float, what: str) -> None:
        print(f"{fraction:6.1%}  {what}", file=sys.stderr, flush=True)

    done = prepare(args.models_dir, progress, decoder=not args.skip_decoder)
    if args.json:
        print_json(done.to_dict())
    else:
        print(f"decoder: {done.decoder}\nvariants counted: {done.variants_counted}, compared: "
              f"{done.variants_compared} ({done.seconds:.1f} s)")
    return 0


def _decoder_tokens(text: str) -> int:
    from explorer.tasks.causal.fill import (
        MAX_ANSWER_TOKENS,  # the library's cap, read when the option is used
    )

    return int(number(int, 1, MAX_ANSWER_TOKENS)(text))


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""
    p = sub.add_parser("fill-mask", help="top-k predictions for each [MASK], several models side by side")
    p.add_argument("--models", required=True, help="comma-separated catalog keys or save_pretrained directories")
    given = p.add_mutually_exclusive_group(required=True)
    given.add_argument("--text", help="prompt with [MASK], <mask> or ___ where a word is missing")
    given.add_argument("--text-file", metavar="FILE", help="UTF-8 file with one prompt per line (- reads standard "
                       "input); blank lines are skipped; answered in chunks of 256, printed as each finishes, progress "
                       "on stderr; with --jsonl one JSON object per prompt (streamed), with --json one list at the end")
    p.add_argument("--top-k", type=number(int, 1, 50), default=5)
    p.add_argument("--decoder-tokens", type=_decoder_tokens, default=1,
                   help="a decoder's answers (gemma3-270m) may have up to N tokens: a number, a name (default 1)")
    p.add_argument("--random-weights", action="store_true", help="untrained weights built from the config")
    p.add_argument("--models-dir", default=None, help="directory with downloaded models (else EXPLORER_MODELS_DIR)")
    shape = p.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="machine-readable output")
    shape.add_argument("--jsonl", action="store_true", help="with --text-file: one JSON object per prompt, each line "
                                                            "printed as its chunk finishes (Ctrl-C keeps them)")
    add_placement(p)
    add_endpoint_flags(p)  # a served decoder beside (or instead of) --models
    p.set_defaults(func=_fill_mask)

    d = sub.add_parser("download", help="fetch reference weights (safetensors) from the Hugging Face hub")
    d.add_argument("keys", nargs="+", metavar="KEY")
    d.add_argument("--models-dir", default=None, help="download into DIR/KEY instead of the HF cache")
    d.set_defaults(func=_download)

    m = sub.add_parser("models", help="where the weights of every variant are (ready / not present)")
    m.add_argument("--models-dir", default=None)
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=_models)

    w = sub.add_parser("prepare", help="convert the bundled decoder and fill the caches once (make run does it)")
    w.add_argument("--models-dir", default=None, help="where the converted decoder goes (else EXPLORER_MODELS_DIR)")
    w.add_argument("--skip-decoder", action="store_true", help="only the catalog caches, no conversion")
    w.add_argument("--json", action="store_true")
    w.set_defaults(func=_prepare)
