"""CLI of the Spans & QA page: ``infill`` and ``qa``, the same library calls as the page.

    python -m explorer infill --model gemma3-270m --text "Thank you ___ me to your party ___ week." --json
    python -m explorer qa --model gemma3-270m --question "When was it built?" --context-file tower.txt --json
    python -m explorer infill --endpoint gemma --text "Paris is the ___ of France."      # a served decoder
    python -m explorer qa --base-url http://127.0.0.1:8080/v1 --model gemma3-270m --question ... --context ...

``infill`` fills every ``___`` with a decoder, T5 or BART (:func:`explorer.tasks.infill.run`); ``qa`` answers
with a decoder (generative) or a SQuAD reader (extractive, :func:`explorer.tasks.qa.ask`). Bad input is
refused before any model loads. ``--endpoint NAME`` / ``--base-url URL`` run a served decoder instead
(:func:`explorer.cli.served.backend_from_args`: the same call on a :class:`~explorer.serving.backend.Backend`, the
same result saying which server answered; extractive QA needs a local reader).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from explorer.cli import add_placement, print_json
from explorer.cli.argtypes import number, read_source, text_source
from explorer.cli.served import add_endpoint_flags, backend_from_args
from explorer.core.notices import texts
from explorer.runtime.resolve import resolve

if TYPE_CHECKING:  # typing only: the answer types import torch
    from explorer.tasks.causal.answer import GenerativeAnswer

__all__ = ["cmd_infill", "cmd_qa", "register"]

MAX_NEW_TOKENS = 64  # the Spans page's slider


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``infill`` and ``qa``."""
    p = sub.add_parser("infill", help="fill the ___ blanks of a text with a decoder, T5 or BART (Spans page)")
    p.add_argument("--model", required=True, help="catalog key (gemma3-270m, t5-small, bart-base) or a directory")
    text_source(p, help="the text, with ___ where a span is missing")
    p.add_argument("--max-new-tokens", type=number(int, 1, MAX_NEW_TOKENS), default=20,
                   help="tokens per blank (T5 and BART; a decoder tries answers of 1 to 4 tokens)")
    _common(p)
    p.set_defaults(func=cmd_infill)

    q = sub.add_parser("qa", help="answer a question from a context: a decoder writes it, a SQuAD reader points")
    q.add_argument("--model", required=True, help="gemma3-270m, a SQuAD hub id or a question-answering directory")
    q.add_argument("--question", required=True, help="the question")
    text_source(q, "context", help="the text that holds the answer")
    q.add_argument("--max-answer-len", type=number(int, 1, 64), default=30, help="longest span (extractive)")
    _common(q)
    q.set_defaults(func=cmd_qa)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--random-weights", action="store_true", help="untrained weights (labelled) instead of real ones")
    p.add_argument("--models-dir", default=None, help="where downloaded weights live (else EXPLORER_MODELS_DIR)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_placement(p)
    add_endpoint_flags(p)  # a served decoder instead of --model


def cmd_infill(args: argparse.Namespace) -> int:
    """Fill the blanks and print the filled text (JSON: the page's whole result)."""
    model = backend_from_args(args, lambda: resolve(args.model, args.models_dir, random_weights=args.random_weights))
    result = model.infill(read_source(args), args.max_new_tokens)
    if args.json:
        print_json(result.to_dict())
        return 0
    label = " (untrained: random weights)" if result.untrained else ""
    ran = result.device_name if model.ref is None else result.device  # a server's name; here the device
    print(f"== {result.model}{label}  [{result.family}, {ran}, {result.seconds * 1000:.0f} ms]")
    print(result.filled)
    for i, span in enumerate(result.spans, start=1):
        print(f"   blank {i}: {span!r}")
    for note in texts(result.notices):
        print(f"   note: {note}")
    return 0


def cmd_qa(args: argparse.Namespace) -> int:
    """Answer the question and print the answer with where it is in the context."""
    from explorer.tasks import qa

    context = read_source(args, "context")
    model = backend_from_args(args, lambda: qa.model_ref(args.model, args.models_dir, args.random_weights))
    # a served decoder writes its answer (generative): --max-answer-len is an extractive reader's
    result: qa.QAResult | GenerativeAnswer = model.answer(args.question, context, args.max_answer_len)
    out = result.to_dict()
    if args.json:
        print_json(out)
        return 0
    label = " (untrained: random weights)" if result.untrained else ""
    ran = f", {result.device_name}" if model.ref is None else ""  # a server says which
    print(f"== {args.model or result.model}{label}  [{result.kind}{ran}]")
    print(f"answer: {result.answer}")
    notes = out.get("notices") or ([out["notice"]] if out.get("notice") else [])
    assert isinstance(notes, list)  # QAResult's notice texts, or a generative answer's one joined line
    for note in notes:
        print(f"   note: {note}")
    return 0
