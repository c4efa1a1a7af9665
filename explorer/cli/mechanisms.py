"""CLI of the mechanisms area: ``python -m explorer mechanism {deberta,distillation,t5,ctrl,m2m} ... [--json]``.

The same library calls as the Mechanisms page; models are built from the catalog configs with random weights.
"""

from __future__ import annotations

import argparse

from explorer.cli import add_placement, placement_of, print_json
from explorer.cli.argtypes import number, seed

DEFAULT_TEXT = "Paris is the capital of France, and Rome is the capital of Italy."


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``mechanism`` and its five kinds to the parser."""
    p = sub.add_parser("mechanism", help="DeBERTa's attention split, distillation losses, text-to-text layouts")
    kinds = p.add_subparsers(dest="mechanism", required=True)
    d = kinds.add_parser("deberta", help="layer-0 attention split into c2c + c2p + p2c, checked against the model")
    d.add_argument("key", help="deberta-base, deberta-v2-xlarge or deberta-v3-base")
    d.add_argument("--text", default=DEFAULT_TEXT)
    add_placement(d)  # the split runs on a real module: where and in what precision is the user's choice
    k = kinds.add_parser("distillation", help="DistilBERT's triple loss and TinyBERT's layer-wise losses")
    k.add_argument("--text", default=DEFAULT_TEXT)
    k.add_argument("--seed", type=seed(), default=0, help="which tokens are masked")
    k.add_argument("--temperature", type=number(float, 0.5, 20), default=2.0,
                   help="softmax temperature of L_ce, 0.5-20 (DistilBERT: 2)")
    add_placement(k)  # teacher and students run on real modules, as the DeBERTa split
    t = kinds.add_parser("t5", help="a task in T5's framing: prefix + input, label as text")
    t.add_argument("task", help="translation, cola, stsb or summarize")
    t.add_argument("--text", default=None, help="input text (default: the paper's example)")
    t.add_argument("--label", default=None, help="label as text (default: the paper's example)")
    c = kinds.add_parser("ctrl", help="a text after one of CTRL's control codes")
    c.add_argument("code", help="a control code such as Links, Wikipedia, Reviews, Questions")
    c.add_argument("--text", default=None)
    m = kinds.add_parser("m2m", help="M2M-100's source/target language-token layout")
    m.add_argument("--src", default="en")
    m.add_argument("--tgt", default="fr")
    m.add_argument("--text", default="Life is like a box of chocolates.")
    m.add_argument("--target", default="La vie est comme une boîte de chocolat.")
    for parser in (d, k, t, c, m):
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.set_defaults(func=cmd_mechanism)


def _result(args: argparse.Namespace) -> dict[str, object]:
    # torch (deberta, distillation), transformers (text2text) at their tops: only this command pays for them
    from explorer.papers.mechanisms import deberta, distillation, text2text

    if args.mechanism == "deberta":
        return deberta.split_attention(args.key, args.text, **placement_of(args).kwargs()).to_dict()
    if args.mechanism == "distillation":
        where = placement_of(args).kwargs()
        return {"sizes": distillation.model_sizes().to_dict(),
                "distilbert": distillation.triple_loss(args.text, args.seed, args.temperature, **where).to_dict(),
                "tinybert": distillation.layerwise_loss(args.text, args.seed, **where).to_dict()}
    if args.mechanism == "t5":
        task = text2text.T5_TASKS.get(args.task)
        example = (task.example_input, task.example_target) if task else ("", "")
        return text2text.t5_frame(args.task, args.text or example[0], args.label or example[1]).to_dict()
    if args.mechanism == "ctrl":
        return text2text.ctrl_frame(args.code, args.text or text2text.CTRL_EXAMPLES.get(args.code, "A knife")).to_dict()
    return text2text.m2m_frame(args.src, args.tgt, args.text, args.target).to_dict()


def _lines(out: dict[str, object], prefix: str = "") -> list[str]:
    """Nested numbers and short lists as ``path: value`` lines (the text output)."""
    lines = []
    for name, value in out.items():
        if isinstance(value, dict):
            lines += _lines(value, f"{prefix}{name}.")
        elif isinstance(value, float):
            lines.append(f"{prefix}{name}: {value:.6g}")
        elif isinstance(value, list):
            lines.append(f"{prefix}{name}: {' '.join(map(str, value))}")
        else:
            lines.append(f"{prefix}{name}: {value}")
    return lines


def cmd_mechanism(args: argparse.Namespace) -> int:
    """Compute one mechanism and print it (JSON with ``--json``)."""
    out = _result(args)
    if args.json:
        print_json(out)
    else:
        print("\n".join(_lines(out)))
    return 0
