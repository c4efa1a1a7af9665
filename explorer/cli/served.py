"""The served-model flags every model command shares: ``--endpoint NAME`` or ``--base-url URL [--model M]``.

    python -m explorer infill --endpoint gemma --text "Thank you ___ me to your party ___ week."
    python -m explorer qa --base-url http://127.0.0.1:8080/v1 --model gemma3-270m --question ... --context ...

``--endpoint`` names one of the operator's endpoints (``EXPLORER_ENDPOINT_URL`` / ``EXPLORER_ENDPOINTS_FILE``,
:func:`explorer.serving.endpoints.find`); ``--base-url`` types one (:func:`explorer.serving.endpoints.typed`,
refused on a shared server unless it is the operator's), and then ``--model`` is the name the server serves
("" = the only one it lists). So one spelling works on every command: :func:`add_endpoint_flags` adds the flags
(and a ``--model`` where the command has none, so argparse does not read ``--model`` as ``--models``), and makes
the command's own required ``--model`` / ``--models`` optional; :func:`endpoint_from_args` returns the endpoint,
or None for a local run, and says in one line what is missing or contradictory (exit 2, like every command).

A bad URL is refused while parsing (argparse's one line, exit 2):

>>> import argparse
>>> p = argparse.ArgumentParser(prog="x", exit_on_error=False)
>>> p.add_argument("--model", required=True) and None
>>> add_endpoint_flags(p)
>>> endpoint_from_args(p.parse_args(["--model", "gemma3-270m"])) is None
True
>>> endpoint_from_args(p.parse_args(["--base-url", "http://127.0.0.1:8080", "--model", "gemma3-270m"])).base_url
'http://127.0.0.1:8080/v1'
>>> endpoint_from_args(p.parse_args([]))
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: Give --model (a local model), or --endpoint NAME / --base-url URL (a served one).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from explorer.cli import placement_of
from explorer.core.errors import ExplorerError, shorten
from explorer.serving import endpoints
from explorer.serving.endpoints import Endpoint

if TYPE_CHECKING:  # the backend imports torch: only a command that runs a model pays for it
    from explorer.runtime.resolve import ModelRef
    from explorer.serving.backend import Backend

__all__ = ["add_endpoint_flags", "endpoint_from_args"]

_LOCAL = "_served_local"  # (dest, flag, was required, its default) of the command's own local-model option


def _url(text: str) -> str:
    """argparse type of ``--base-url``: checked and normalised at parse time."""
    try:
        return endpoints.parse_url(text)
    except ExplorerError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


_url.__name__ = "URL"


def _action(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((a for a in parser._actions if flag in a.option_strings), None)


def add_endpoint_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--endpoint NAME`` and ``--base-url URL`` (one or the other) to a model command.

    The command's ``--model`` (or, for ``fill-mask``, ``--models``) stops being required: a served run needs no
    local model; :func:`endpoint_from_args` asks for it when no endpoint is given. Where the command has no
    ``--model``, one is added for the typed endpoint's model name."""
    group = parser.add_argument_group("served model (an OpenAI-compatible engine: vLLM, llama.cpp, ...)")
    which = group.add_mutually_exclusive_group()
    which.add_argument("--endpoint", metavar="NAME", default=None,
                       help="a configured endpoint (EXPLORER_ENDPOINT_URL / EXPLORER_ENDPOINTS_FILE) by its name")
    which.add_argument("--base-url", metavar="URL", type=_url, default=None,
                       help="a server's OpenAI base URL (e.g. http://127.0.0.1:8080/v1); --model names the model it "
                            "serves")
    local = _action(parser, "--model")
    own_models = _action(parser, "--models")
    if local is None and own_models is not None:  # fill-mask: --models is local, --model is the served name
        group.add_argument("--model", default=None, metavar="M",
                           help="with --base-url: the model name the server serves (default: the only one it lists)")
        local = own_models
    if local is not None:
        parser.set_defaults(**{_LOCAL: (local.dest, local.option_strings[0], local.required, local.default)})
        local.required, local.default = False, None


def _name(base_url: str) -> str:
    """An endpoint name from the URL's host and port ("127.0.0.1-8080").

    >>> _name("http://127.0.0.1:8080/v1")
    '127.0.0.1-8080'
    """
    host = re.sub(r"[^A-Za-z0-9._-]", "-", base_url.split("://", 1)[-1].split("/", 1)[0]).strip("-._")
    return host[:64] or "typed"


def _local_only(args: argparse.Namespace) -> None:
    """A run with only a served model refuses the options that choose how a local model runs (said, not
    ignored)."""
    if getattr(args, "endpoint", None) is None and getattr(args, "base_url", None) is None:
        return
    for dest, flag in (("random_weights", "--random-weights"), ("device", "--device"), ("dtype", "--dtype"),
                       ("models_dir", "--models-dir")):
        if getattr(args, dest, None) not in (None, False):
            raise ExplorerError(f"{flag} chooses how a local model runs; a served model runs on its server: drop "
                                f"{flag}, or --endpoint/--base-url.")


def endpoint_from_args(args: argparse.Namespace) -> Endpoint | None:
    """The served endpoint the command line names, or None for a local run (the command's own ``--model`` /
    ``--models`` default restored then). One ExplorerError for a missing or contradictory choice."""
    dest, flag, required, default = getattr(args, _LOCAL, (None, "--model", False, None))
    given: Any = getattr(args, dest, None) if dest else None
    if dest == "model" or given is None:  # nothing local runs beside the served model
        _local_only(args)
    name, url = getattr(args, "endpoint", None), getattr(args, "base_url", None)
    served_model = getattr(args, "model", None)
    if url is not None:  # --model is the served name here ("" = the only model the server lists)
        model = given if dest == "model" else served_model
        if dest == "model":
            args.model = None
        return endpoints.typed(_name(url), url, str(model or "").strip())
    if name is not None:
        if dest == "model" and given is not None:
            raise ExplorerError("--model names a local model; with --endpoint the endpoint's own model is used: drop "
                                "--model, or type the server with --base-url URL --model M.")
        if dest != "model" and served_model is not None:
            raise ExplorerError("--model names the served model of --base-url: with --endpoint, drop it.")
        return endpoints.find(str(name).strip())
    if dest != "model" and served_model is not None:
        raise ExplorerError(f"--model {shorten(served_model)!r} names a served model: give --base-url URL with it, "
                            f"or use {flag} for local models.")
    if given is None:
        if required:
            raise ExplorerError(f"Give {flag} (a local model), or --endpoint NAME / --base-url URL (a served one).")
        if dest:
            setattr(args, dest, default)
    return None


def backend_from_args(args: argparse.Namespace, local: Callable[[], ModelRef]) -> Backend:
    """The model the command line names, here or served, as one :class:`~explorer.serving.backend.Backend`: the
    endpoint's when one is named (:func:`endpoint_from_args`), else the model ``local()`` resolves (called only
    then), placed as ``--device`` / ``--dtype`` say. The command then asks it without asking where it runs."""
    from explorer.serving import backend

    ep = endpoint_from_args(args)
    if ep is not None:
        return backend.served(ep)
    return backend.model(local(), **placement_of(args).kwargs())
