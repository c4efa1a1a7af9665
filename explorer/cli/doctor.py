"""CLI: ``python -m explorer doctor [--json]``: devices, versions, what ``auto`` picks, bundled models, caches.

    python -m explorer doctor            # a short report to read
    python -m explorer doctor --json     # the same as JSON (explorer.runtime.doctor.Diagnosis.to_dict)
"""

from __future__ import annotations

import argparse
from typing import Any

from explorer.cli import endpoints, print_json
from explorer.core.errors import ExplorerError
from explorer.runtime.doctor import diagnose

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check the set-up: GPU(s) and memory, versions, dtype auto picks, caches")
    p.add_argument("--models-dir", default=None, help="the models folder to report on (else EXPLORER_MODELS_DIR)")
    p.add_argument("--no-sizes", action="store_true", help="do not walk the caches to add up their sizes")
    p.add_argument("--no-probe", action="store_true", help="list the served endpoints without asking them")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_doctor)


def _gib(n: int | None) -> str:
    return "?" if n is None else f"{n / 2**30:.1f} GiB"


def _lines(d: dict[str, Any]) -> list[str]:
    auto = d["auto"]
    out = ["devices:"]
    out += [f"  {x['name']:<40} {_gib(x['free_bytes'])} free of {_gib(x['total_bytes'])}"
            + ("" if x["bfloat16"] else "  (no bfloat16)") for x in d["devices"]]
    out.append("versions: " + ", ".join(f"{k} {v}" for k, v in d["versions"].items() if v))
    out.append(f"auto picks: {auto['device_name']} · {auto['dtype']}  (choices: {', '.join(auto['choices'])})")
    out += [f"  {dev} unavailable: {why}" for dev, why in auto["unavailable"].items()]
    mini, gemma = d["bundled"]["minilm"], d["bundled"]["gemma"]
    out.append(f"MiniLM ({mini['package']}): {'present' if mini['present'] else 'missing'}")
    state = "converted" if gemma["converted"] else ("installed, not converted" if gemma["present"] else "missing")
    out.append(f"Gemma 3 270M ({gemma['package']}): {state}" + (f": {gemma['hint']}" if gemma["hint"] else ""))
    out.append("caches:")
    for c in d["caches"]:
        size = "" if c["size_bytes"] is None else f"  {_gib(c['size_bytes'])} in {c['files']:,} files" + (
            " or more" if c["partial"] else "")
        out.append(f"  {c['name']:<24} {c['path'] or '(not set)'}{'' if c['exists'] or not c['path'] else ' (absent)'}"
                   f"{size}")
    w = d["workers"]
    out.append(f"model workers: {w['slots']} slot(s), {w['running']} running; "
               f"model cache {_gib(w['model_cache_budget_bytes'])}, {w['models_in_memory']} model(s) in memory")
    return out


def _doctor(args: argparse.Namespace) -> int:
    report = diagnose(args.models_dir, sizes=not args.no_sizes).to_dict()
    try:
        served = endpoints.report(probe=not args.no_probe)
        report["endpoints"] = served
        tail = endpoints.lines(served)
    except ExplorerError as err:  # a broken endpoints file is one line of the report, not the end of it
        report["endpoints"] = {"error": str(err)}
        tail = [f"served endpoints: {err}"]
    if args.json:
        print_json(report)
    else:
        print("\n".join(_lines(report) + tail))
    return 0
