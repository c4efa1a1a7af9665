"""CLI of "Positions and the KV cache": how a variant knows where a token is, and what its cache costs.

    python -m explorer positions --model gemma3-270m --json
    python -m explorer positions --model t5-small --distance-max 300 --json
    python -m explorer kv-cache --model gemma3-270m --context 4096 --dtype bfloat16 --json
    python -m explorer kv-cache --model path/to/config.json --context 2048 --json
    python -m explorer kv-cache --model gemma3-270m --context 64 --measure --json

``positions`` prints the scheme (``kind`` among learned-absolute, sinusoidal, relative-buckets, disentangled,
rotary, none, with its parameters) and what it does at each distance up to ``--distance-max``. ``kv-cache``
prints the calculator's bytes at ``--context`` tokens; ``--measure`` (a model with weights) also generates
greedily with the cache and without it, so that the prompt and the new tokens fill exactly ``--context``
positions, and adds the measured cache's bytes, whether both runs gave the same tokens, and their speeds
(the other fields are null without it).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.architecture import kvcache
from explorer.architecture.positions.scheme import MAX_DISTANCE, by_distance, scheme_of
from explorer.cli import add_placement, placement_of, print_json
from explorer.cli.argtypes import number
from explorer.core import userfiles
from explorer.core.errors import ExplorerError, shorten
from explorer.runtime.resolve import resolve

if TYPE_CHECKING:  # typing only: the measurement imports torch, loaded by --measure itself
    from explorer.tasks.generation import cachelive

__all__ = ["cmd_kv_cache", "cmd_positions", "register"]

DEFAULT_DISTANCE = 32
MEASURE_TEXT = "The key and value cache keeps what every earlier token said, so the next step reads only one."


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``positions`` and ``kv-cache``."""
    p = sub.add_parser("positions", help="how a variant encodes positions: the kind, its parameters, per distance")
    p.add_argument("--model", required=True, help="catalog key, a model folder or a config.json")
    p.add_argument("--distance-max", type=number(int, 1, MAX_DISTANCE), default=DEFAULT_DISTANCE,
                   help=f"series from -N to N (default {DEFAULT_DISTANCE})")
    p.add_argument("--models-dir", default=None, help="where downloaded weights live (else EXPLORER_MODELS_DIR)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_positions)
    k = sub.add_parser("kv-cache", help="the key/value cache's bytes per layer at a context length (and measured)")
    k.add_argument("--model", required=True, help="catalog key, a model folder or a config.json")
    k.add_argument("--context", type=number(int, 1, kvcache.MAX_CONTEXT), required=True, help="tokens cached")
    k.add_argument("--measure", action="store_true",
                   help="also generate with and without the cache on the model's weights and measure the cache")
    k.add_argument("--new-tokens", type=number(int, 1, 256), default=16, help="with --measure: tokens generated")
    k.add_argument("--models-dir", default=None, help="where downloaded weights live (else EXPLORER_MODELS_DIR)")
    k.add_argument("--json", action="store_true", help="print JSON")
    add_placement(k)  # its --dtype is the cache's (float32 unless given; with --measure, the model's)
    k.set_defaults(func=cmd_kv_cache)


def _config(target: str, models_dir: str | None) -> tuple[str, object]:
    """(name, config) of a catalog key, a model folder or a config.json file."""
    from explorer.architecture import build

    path = Path(target)
    try:
        is_file = path.is_file()
    except (OSError, ValueError):  # too long for a path, or a NUL byte: it can only be a (bad) key
        is_file = False
    if is_file or target.endswith(".json"):
        if not is_file:
            raise ExplorerError(f"No such file: {shorten(target)}. Give a catalog key, a model folder or the path "
                                "of a config.json.")
        data = userfiles.read_path(path, userfiles.MAX_CONFIG_BYTES, "That config.json")
        return path.stem, build.parse_config_json(data)
    ref = resolve(target, models_dir)
    config = ref.config()
    if not config:
        raise ExplorerError(f"{shorten(target)!r} is neither a catalog variant nor a model folder with a "
                            "config.json: see `python -m explorer list`.")
    return ref.spec, config


def cmd_positions(args: argparse.Namespace) -> int:
    """Print the variant's position scheme and its series by distance."""
    name, config = _config(args.model, args.models_dir)
    scheme = scheme_of(config, name)
    out = {**scheme.to_dict(), "by_distance": by_distance(scheme, args.distance_max)}
    if args.json:
        print_json(out)
        return 0
    print(f"{scheme.label} ({name}): {scheme.kind}: {scheme.explained}")
    for key, value in out.items():
        if key not in ("model", "kind", "label", "explained", "by_distance", "notes") and value not in (None, []):
            print(f"  {key:<16} {value}")
    return 0


def _measured(args: argparse.Namespace, name: str) -> cachelive.CacheMeasurement:
    from explorer.tasks.generation import cachelive

    placement = placement_of(args)
    return cachelive.measure_model(name, MEASURE_TEXT, args.new_tokens, args.context, device=placement.device,
                                   dtype=placement.dtype, models_dir=args.models_dir)


def _layer(layer: kvcache.LayerCache) -> dict[str, object]:
    return {"layer": layer.layer, "kind": layer.kind, "kv_heads": layer.kv_heads, "head_width": layer.head_width,
            "window": layer.window, "bytes": layer.bytes}


def cmd_kv_cache(args: argparse.Namespace) -> int:
    """Print the cache's bytes at ``--context`` tokens (and, with --measure, the measured cache)."""
    name, config = _config(args.model, args.models_dir)
    measured: dict[str, object] = dict.fromkeys(("measured_bytes", "tokens_equal", "cached_tokens_per_s",
                                                 "uncached_tokens_per_s"))
    if args.measure:
        m = _measured(args, name)
        plan = m.calculated  # the loaded model's own config and dtype
        measured = {"measured_bytes": m.measured_bytes, "tokens_equal": m.tokens_equal,
                    "cached_tokens_per_s": m.cached_tokens_per_s, "uncached_tokens_per_s": m.uncached_tokens_per_s}
    else:
        plan = kvcache.plan(config, args.context, args.dtype if args.dtype not in (None, "auto") else "float32",
                            name)
    out = {"model": name, "context": plan.context, "dtype": plan.dtype, "bytes": plan.bytes,
           "bytes_per_token": plan.bytes_per_token, "layers": [_layer(layer) for layer in plan.layers], **measured}
    if args.json:
        print_json(out)
        return 0
    print(f"{name}: {plan.context:,} tokens in {plan.dtype}: {plan.bytes:,} bytes ({plan.grouping}, "
          f"{plan.bytes_per_token:,} bytes a token below any window)")
    for note in plan.notes:
        print(f"  {note}")
    if args.measure:
        print(f"  measured {measured['measured_bytes']:,} bytes; same tokens: {measured['tokens_equal']}; "
              f"{measured['cached_tokens_per_s']:.1f} tokens/s cached, {measured['uncached_tokens_per_s']:.1f} "
              "uncached")
    return 0
