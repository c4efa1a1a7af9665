"""CLI of the decoding lab: ``generate`` and ``next-token`` with a real decoder.

    python -m explorer generate --model gemma3-270m --text "The capital of France is" --strategy top-p \\
        --top-p 0.9 --temperature 0.8 --max-new-tokens 20 --seed 0 --json
    python -m explorer next-token --model gemma3-270m --text "The capital of France is" --top-k 10 --json

The first use of ``gemma3-270m`` converts the bundled GGUF once (progress on stderr). A served model instead:

    python -m explorer next-token --endpoint gemma --text "The capital of France is"
    python -m explorer generate --base-url http://127.0.0.1:8080/v1 --text "..." --strategy beam --beams 2 [--fast]
"""

from __future__ import annotations

import argparse
import sys

from explorer.cli import add_placement, placement_of, print_json
from explorer.cli.argtypes import number, read_source, seed, text_source
from explorer.cli.served import add_endpoint_flags, endpoint_from_args
from explorer.core.errors import ExplorerError
from explorer.runtime import capacity
from explorer.runtime.capacity import CPU_NEW_TOKENS, GPU_NEW_TOKENS
from explorer.runtime.resolve import resolve
from explorer.serving import backend
from explorer.serving.backend import Backend
from explorer.serving.endpoints import Endpoint
from explorer.tasks.generation import DecodingSettings, load_decoder
from explorer.tasks.generation.nexttoken import MAX_TABLE
from explorer.tasks.generation.strategy import (
    MAX_BEAMS,
    MAX_TEMPERATURE,
    MAX_TOP_K,
    MIN_TEMPERATURE,
    STRATEGIES,
)


def _progress(fraction: float, what: str) -> None:
    print(f"{fraction:6.1%}  {what}", file=sys.stderr, flush=True)


def _notes(texts: list[str]) -> None:
    for text in texts:
        print(f"note: {text}", file=sys.stderr)


def _backend(args: argparse.Namespace, served: Endpoint | None, purpose: str) -> Backend:
    """The model the command line names, in this process or served: one interface from here on."""
    if served is not None:
        return backend.served(served)
    return backend.local(load_decoder(resolve(args.model, args.models_dir), _progress, purpose=purpose,
                                      **placement_of(args).kwargs()))


def _generate(args: argparse.Namespace) -> int:
    served = endpoint_from_args(args)
    where = placement_of(args)
    # the chosen device's caps (a GPU allows more new tokens); a served model: the CPU's (a round trip a step)
    facts = capacity.device_facts(where.resolve()[0]) if served is None else None
    settings = DecodingSettings(args.strategy, args.temperature, args.top_k, args.top_p, args.beams,
                                args.max_new_tokens, args.seed).validated(facts)  # bad knobs fail before loading
    text = read_source(args)  # a bad file too
    if served is None and args.fast:
        raise ExplorerError("--fast asks a served model for the whole continuation in one request: give "
                            "--endpoint or --base-url with it.")
    model = _backend(args, served, "`generate`")
    result = model.generate(text, settings, fast=args.fast)
    _notes(result.notice_texts)
    if args.json:
        print_json(result.to_dict())
        return 0
    print(f"== {result.model}  [{settings.strategy}, {len(result.steps)} tokens, {result.seconds:.1f} s, "
          f"{result.device_name} · {result.dtype}]")
    print(result.prompt + result.text)
    for step in result.steps:
        others = ", ".join(f"{a.token!r} {a.probability:.3f}" for a in step.top[:3])
        print(f"   {step.token!r:>16} {step.probability:6.3f}   top: {others}")
    return 0


def _next_token(args: argparse.Namespace) -> int:
    served = endpoint_from_args(args)
    text = read_source(args)  # a bad file fails before the model loads
    result = _backend(args, served, "`next-token`").next_token(text, args.top_k)
    _notes(result.notice_texts)
    if args.json:
        print_json(result.to_dict())
        return 0
    if served is not None:
        print(f"== {result.model} [{result.device_name}]: log-probabilities as the server sent them")
        for c in result.candidates:
            print(f"   {c.token!r:>16}  log p {c.logit:8.3f}  p {c.probability:.4f}")
        return 0
    tied = "is" if result.tied_output else "is not"
    print(f"== {result.model}: {result.vocab_size:,} tokens; the output layer {tied} the input embedding matrix "
          f"[{result.device_name} · {result.dtype}]")
    for c in result.candidates:
        print(f"   {c.token!r:>16}  id {c.token_id:>7}  logit {c.logit:8.3f}  p {c.probability:.4f}")
    return 0


def _table_rows(text: str) -> int:
    return int(number(int, 1, MAX_TABLE)(text))


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="catalog key (gemma3-270m) or a save_pretrained directory")
    text_source(p, help="the prompt")
    p.add_argument("--models-dir", default=None, help="directory of downloaded/converted models")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_placement(p)
    add_endpoint_flags(p)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="generate a continuation with one decoding strategy")
    _common(p)
    p.add_argument("--strategy", choices=STRATEGIES, default="greedy")
    p.add_argument("--temperature", type=number(float, 0, MAX_TEMPERATURE), default=1.0,
                   help=f"0 (or below {MIN_TEMPERATURE:g}, too cold to sample) means greedy")
    p.add_argument("--top-k", type=number(int, 1, MAX_TOP_K), default=50)
    p.add_argument("--top-p", type=number(float, 0, 1, lo_open=True), default=0.9, help="in (0, 1]")
    p.add_argument("--beams", type=number(int, 1, MAX_BEAMS), default=4)
    p.add_argument("--max-new-tokens", type=number(int, 1, GPU_NEW_TOKENS), default=20,  # the device's cap: at run
                   help=f"at most {CPU_NEW_TOKENS} on a CPU, {GPU_NEW_TOKENS:,} on a GPU")
    p.add_argument("--seed", type=seed(), default=0)
    p.add_argument("--fast", action="store_true", help="a served model: the whole continuation in one request "
                   "(the server samples; no beam search) instead of one request per step")
    p.set_defaults(func=_generate)
    p = sub.add_parser("next-token", help="the next-token distribution of a decoder")
    _common(p)
    p.add_argument("--top-k", type=_table_rows, default=10)
    p.set_defaults(func=_next_token)
