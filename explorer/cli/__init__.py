"""Command line: ``python -m explorer COMMAND ...``.

Each area registers its sub-commands from its own module (``register(subparsers)``), and
each command is a function ``(args) -> int`` calling the same library functions as the pages.
Errors: an ``ExplorerError`` (or argparse's own) becomes one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import re
import sys
from typing import TYPE_CHECKING, NoReturn

from explorer.cli.textinput import check_utf8
from explorer.core import logs, settings
from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import ECHO_CHARS

if TYPE_CHECKING:  # explorer.runtime.placement imports torch: only commands that run a model pay for it
    from explorer.runtime.placement import Placement

__all__ = ["AREAS", "add_model", "add_placement", "build_parser", "print_json", "placement_of", "main"]

# One module per area; each defines ``register(subparsers) -> None``.
AREAS = ("architecture", "objectives", "tokenization", "patterns", "attention", "inference", "similarity",
         "results", "generation", "spans", "mechanisms", "compress", "interventions", "doctor", "pretrain",
         "endpoints", "explain", "evaluation", "forward", "positions", "sae")


# A quoted value in one of argparse's own messages ("invalid choice: '<10,000 characters>'").
_QUOTED = re.compile(rf"'[^'\n]{{{ECHO_CHARS + 1},}}'|\"[^\"\n]{{{ECHO_CHARS + 1},}}\"")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (argparse prints usage too)
        message = _QUOTED.sub(lambda m: repr(shorten(m.group(0)[1:-1])), message)
        print(f"error: {' '.join(message.split())}", file=sys.stderr)
        raise SystemExit(2)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command``, areas are imported only until one registers it.

    Some areas import torch at module level (seconds); ``python -m explorer compare ...``
    should not pay for the generation area. Without a known command (``--help``, a typo),
    every area is registered, so help and "invalid choice" list all commands.
    """
    parser = _Parser(prog="python -m explorer", description="Transformer Explorer command line")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    # the area named like the command first ("pretrain-compare" is the pretrain area's): its checks then run with
    # none of the other areas' heavy imports
    named = (command or "").split("-")[0]
    for area in sorted(AREAS, key=lambda a: a != named):
        importlib.import_module(f"explorer.cli.{area}").register(sub)
        if command is not None and command in sub.choices:
            break
    return parser


def _choice(what: str):
    """argparse ``type=`` for --device / --dtype: the name checked by explorer.runtime.placement (one line, exit 2)."""
    def check(text: str) -> str:
        from explorer.runtime.placement import Placement

        try:
            chosen = Placement.parse(text, None) if what == "device" else Placement.parse(None, text)
        except ExplorerError as err:
            raise argparse.ArgumentTypeError(str(err)) from err
        return getattr(chosen, what)
    check.__name__ = what  # argparse names the type in its fallback message
    return check


def add_placement(parser: argparse.ArgumentParser) -> None:
    """``--device`` and ``--dtype`` on a command that runs a model (every live command uses this one helper).

    Defaults are None (= auto), not "auto": argparse would run the check, and import torch, for every call.
    """
    parser.add_argument("--device", type=_choice("device"), default=None, metavar="{auto,cpu,cuda,mps}",
                        help="where the model runs (default auto: CUDA, then Apple MPS, then the CPU)")
    parser.add_argument("--dtype", type=_choice("dtype"), default=None, metavar="{auto,float32,bfloat16,float16}",
                        help="precision (default auto: bfloat16 on CUDA, float16 on MPS, float32 on the CPU)")


def add_model(parser: argparse.ArgumentParser) -> None:
    """``--model``, ``--random-weights``, ``--models-dir``, ``--json`` and the placement: the options every command
    that runs one model takes."""
    parser.add_argument("--model", required=True, help="catalog key (gemma3-270m is bundled), lab/NAME or a directory")
    parser.add_argument("--random-weights", action="store_true", help="untrained weights (labelled) from the config")
    parser.add_argument("--models-dir", default=None, help="where downloaded weights live (else EXPLORER_MODELS_DIR)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_placement(parser)


def placement_of(args: argparse.Namespace) -> Placement:
    """The command's device/dtype choice, checked against this machine (a missing GPU: one line, exit 2)."""
    from explorer.runtime.placement import Placement

    chosen = Placement.parse(getattr(args, "device", None), getattr(args, "dtype", None))
    chosen.resolve()  # "cuda is not available here: ..." before any model is loaded
    return chosen


def _finite(obj: object, bad: list[int]) -> object:
    """``obj`` with every float that is not a finite number as None (counted in ``bad``), numpy scalars and arrays
    as Python numbers and lists (told apart by their module: a light command never imports numpy)."""
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        bad[0] += 1
        return None
    if isinstance(obj, dict):
        return {k: _finite(v, bad) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v, bad) for v in obj]
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):  # an array, or a scalar (its tolist: a number)
        return _finite(obj.tolist(), bad)
    return obj


def print_json(obj: object) -> None:
    """Print a JSON document (the CLI's machine-readable output). NaN and infinities are not JSON: each is written
    as null, and one ``note:`` line on stderr says how many there were; ``allow_nan=False`` makes any that slips
    past an error here rather than a file another program cannot read."""
    bad = [0]
    clean = _finite(obj, bad)
    if bad[0]:
        print(f"note: {bad[0]:,} value(s) were not finite numbers (NaN or infinity) and are written as null.",
              file=sys.stderr)
    json.dump(clean, sys.stdout, ensure_ascii=False, indent=2, allow_nan=False)
    sys.stdout.write("\n")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    logs.quiet_imports()  # optional packages' import-time warnings are not the user's business
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    try:
        settings.check_all()  # a bad EXPLORER_* value: one line before any work, not halfway through it
        check_utf8(args)
        return int(args.func(args) or 0)
    except ExplorerError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
