"""CLI of served models: ``endpoints`` lists the configured ones with what each can do; ``serve`` starts a real
engine on this machine (llama-cpp-python on the bundled Gemma GGUF) for the app and the commands to use.

    python -m explorer endpoints [--json] [--no-probe]
    python -m explorer serve [--port 8080] [--embeddings-port 8081] [--endpoints-out FILE]

``doctor`` reports the endpoints too (:func:`report`).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from typing import Any

from explorer.cli import print_json
from explorer.cli.argtypes import number
from explorer.core.errors import ExplorerError, shorten
from explorer.serving import endpoints, localengine
from explorer.serving.endpoints import Endpoint
from explorer.serving.probe import capabilities

__all__ = ["register", "report", "toml_of"]


def report(probe: bool = True) -> list[dict[str, Any]]:
    """Every configured endpoint (no key, ever), with its probed capabilities where ``probe``."""
    rows = []
    for ep in endpoints.configured():
        row: dict[str, object] = {"key": ep.key, **ep.to_dict()}
        if probe:
            row["capabilities"] = capabilities(ep, fresh=True).to_dict()
        rows.append(row)
    return rows


def lines(rows: list[dict[str, Any]]) -> list[str]:
    """The report as lines to read."""
    if not rows:
        return ["served endpoints: none configured (set EXPLORER_ENDPOINT_URL or EXPLORER_ENDPOINTS_FILE; "
                "`python -m explorer serve` starts one here)"]
    out = ["served endpoints:"]
    for r in rows:
        out.append(f"  {r['key']:<24} {r['base_url']}  model {r['model'] or '(the only one listed)'}"
                   f"{'  key from $' + r['api_key_env'] if r['api_key_env'] else ''}")
        caps = r.get("capabilities")
        if caps is None:
            continue
        if not caps["reachable"]:
            out.append(f"      unreachable: {caps['error']}")
            continue
        can = [name for name, ok in (("top-k", caps["top_k"]), ("prompt log-probabilities", caps["prompt_logprobs"]),
                                     ("embeddings", caps["embeddings"])) if ok]
        out.append(f"      {caps['engine']} {caps['version']}".rstrip() + f", serves {caps['model'] or '?'}; "
                   f"can: {', '.join(can) or 'nothing this explorer uses'}; largest k {caps['max_k']}")
        out += [f"      no {name}: {why}" for name, why in caps["missing"].items()]
    return out


def _endpoints(args: argparse.Namespace) -> int:
    rows = report(probe=not args.no_probe)
    if args.json:
        print_json(rows)
    else:
        print("\n".join(lines(rows)))
    return 0


def toml_of(started: list[Endpoint]) -> str:
    """A TOML endpoints file for started engines (``EXPLORER_ENDPOINTS_FILE``)."""
    out = ["# Written by `python -m explorer serve`: the engines it started on this machine."]
    for ep in started:
        out += ["", "[[endpoint]]", f'name = "{ep.name}"', f'base_url = "{ep.base_url}"', f'model = "{ep.model}"',
                f'label = "{ep.label}"', f"max_concurrent = {ep.max_concurrent}"]
    return "\n".join(out) + "\n"


def _serve(args: argparse.Namespace) -> int:
    if not localengine.available() and not args.dry_run:
        raise ExplorerError(localengine.ENGINE_HINT)
    planned = [Endpoint("gemma-llamacpp", f"http://127.0.0.1:{args.port}/v1", localengine.MODEL_ALIAS,
                        label="Gemma 3 270M (llama-cpp-python)", max_concurrent=localengine.LOCAL_CONCURRENT)]
    if args.embeddings_port:
        planned.append(Endpoint("gemma-embeddings", f"http://127.0.0.1:{args.embeddings_port}/v1",
                                localengine.MODEL_ALIAS, label="Gemma 3 270M embeddings (llama-cpp-python)",
                                max_concurrent=localengine.LOCAL_CONCURRENT))
    if args.endpoints_out:  # written first: an app started beside us finds the file while the engines start
        out = Path(args.endpoints_out).expanduser()
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(toml_of(planned), encoding="utf-8")
        except (OSError, ValueError) as err:
            raise ExplorerError(f"Cannot write --endpoints-out {shorten(args.endpoints_out)!r} "
                                f"({getattr(err, 'strerror', None) or err}): give a writable file path.") from err
    if args.dry_run:
        print(toml_of(planned), end="")
        return 0
    print(f"starting llama-cpp-python on 127.0.0.1:{args.port} (the bundled Gemma 3 270M GGUF)...", file=sys.stderr)
    engines = [localengine.start(args.port, name=planned[0].name)]
    try:
        if args.embeddings_port:
            engines.append(localengine.start(args.embeddings_port, name=planned[1].name, embedding=True))
        for e in engines:
            print(f"serving {e.endpoint.key} at {e.endpoint.base_url} (log: {e.log})", file=sys.stderr)
        print(f"use it: EXPLORER_ENDPOINT_URL={engines[0].endpoint.base_url} EXPLORER_ENDPOINT_MODEL="
              f"{localengine.MODEL_ALIAS} EXPLORER_ENDPOINT_NAME=gemma make run"
              + (f"  (or EXPLORER_ENDPOINTS_FILE={args.endpoints_out})" if args.endpoints_out else ""),
              file=sys.stderr)
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        while all(e.alive() for e in engines):
            time.sleep(1.0)
        raise ExplorerError("An engine stopped by itself: see its log above.")
    finally:
        for e in engines:
            e.stop()


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("endpoints", help="the served models configured, and what each server can do")
    p.add_argument("--no-probe", action="store_true", help="list them without asking the servers")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_endpoints)
    p = sub.add_parser("serve", help="start a real engine here: llama-cpp-python serving the bundled Gemma GGUF")
    p.add_argument("--port", type=number(int, 1024, 65535), default=8080)
    p.add_argument("--embeddings-port", type=number(int, 1024, 65535), default=None,
                   help="also an embeddings server on this port (llama-cpp-python serves one or the other)")
    p.add_argument("--endpoints-out", default=None, metavar="FILE",
                   help="write an EXPLORER_ENDPOINTS_FILE naming the started engines")
    p.add_argument("--dry-run", action="store_true", help="check the arguments and print the endpoints file; start "
                   "nothing")
    p.set_defaults(func=_serve)
