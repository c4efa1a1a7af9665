"""Benchmark of the attention-maps area: the model view of a 512-token text, end to end.

End to end = forward pass with attention outputs + figure build + JSON serialisation (what
Streamlit sends to the browser), with the bundled all-MiniLM-L6-v2 (6 layers x 12 heads) on
the CPU, model already loaded. Compared in the same process with what a user would otherwise do:

- bertviz's ``model_view`` (``html_action="return"``): it embeds every layer x head x L x L
  weight as JSON text in the page. bertviz is not a project dependency: it is installed with
  ``--install-bertviz`` into a cache directory outside the repository (``--no-deps``: it only
  needs torch/transformers/IPython, already here), else that row is skipped;
- a naive plotly grid: ``make_subplots(layers, heads)`` of full-precision float32 heatmaps.

Also reports the payload of the 12 layers x 12 heads x 512 tokens case (against a 5 MB
target) and of one exact head view. Run: ``python benchmarks/bench_attention.py [--install-bertviz]``
-> table on stdout, benchmarks/results/attention.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from explorer.runtime.resolve import resolve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import explorer  # noqa: E402,F401  (offline defaults)
from explorer.plots import attention as plots  # noqa: E402
from explorer.runtime.loading import load_model  # noqa: E402
from explorer.tasks import attention as A  # noqa: E402

BERTVIZ_DIR = Path.home() / ".cache" / "transformer-explorer" / "bertviz"
BERTVIZ_VERSION = "1.4.1"
REPEATS = 2
PROSE = ("The committee postponed the vote because its members had not read the report, and the "
         "chair, who had written most of it herself, said she would present it again next week. ")


def forward(lm, text: str) -> tuple[tuple[torch.Tensor, ...], list[str]]:
    """What a bertviz user writes: one forward with ``output_attentions=True``, truncated to 512."""
    enc = lm.tokenizer(text, return_tensors="pt", truncation=True, max_length=512)
    with torch.inference_mode():
        out = lm.model(**enc, output_attentions=True)
    return out.attentions, lm.tokenizer.convert_ids_to_tokens(enc["input_ids"][0])


def render_ours(att: tuple[torch.Tensor, ...], tokens: list[str]) -> int:
    """Our path after the forward: tensors -> numpy square stack -> uint8 mosaic -> JSON."""
    stack = np.stack([a[0].float().numpy() for a in att])  # (layers, H, L, L)
    return len(plots.model_grid(stack).to_json().encode())


def render_naive(att: tuple[torch.Tensor, ...], tokens: list[str]) -> int:
    """A plotly grid the obvious way: one float32 subplot per layer x head."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=len(att), cols=att[0].shape[1], horizontal_spacing=0.005, vertical_spacing=0.01)
    for layer, a in enumerate(att):
        for head in range(a.shape[1]):
            fig.add_heatmap(z=a[0, head].numpy(), row=layer + 1, col=head + 1, coloraxis="coloraxis")
    return len(fig.to_json().encode())


def render_bertviz(att: tuple[torch.Tensor, ...], tokens: list[str]) -> int:
    from bertviz import model_view

    return len(model_view(att, tokens, html_action="return").data.encode())


def measure(lm, text: str, renderers: dict[str, Callable], repeats: int) -> dict[str, dict[str, float]]:
    """Interleaved runs (forward, then every renderer on its output) so CPU contention from
    other processes hits every method alike; medians of forward, render and their sum."""
    fwd: list[float] = []
    rend: dict[str, list[float]] = {k: [] for k in renderers}
    sizes: dict[str, int] = {}
    for _ in range(repeats + 1):  # the first round is a warm-up
        t0 = time.perf_counter()
        att, tokens = forward(lm, text)
        fwd.append(time.perf_counter() - t0)
        for name, fn in renderers.items():
            t0 = time.perf_counter()
            sizes[name] = fn(att, tokens)
            rend[name].append(time.perf_counter() - t0)
    f = statistics.median(fwd[1:])
    return {name: {"forward_s": round(f, 3), "render_s": round(statistics.median(r[1:]), 3),
                   "end_to_end_s": round(f + statistics.median(r[1:]), 3), "payload_bytes": sizes[name]}
            for name, r in rend.items()}


def install_bertviz() -> None:
    """bertviz into a cache dir outside the repo (never into the project's requirements)."""
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                    str(BERTVIZ_DIR), f"bertviz=={BERTVIZ_VERSION}"], check=True)


def have_bertviz() -> bool:
    if BERTVIZ_DIR.is_dir():
        sys.path.append(str(BERTVIZ_DIR))
    try:
        import bertviz  # noqa: F401
    except ImportError:
        return False
    return True


def ours_breakdown(lm, text: str) -> dict[str, float]:
    """Median seconds of each stage of our path (extraction / figure build / JSON)."""
    stages: dict[str, list[float]] = {"extract_s": [], "figure_s": [], "json_s": []}
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        maps = A.extract_attention(lm.model, lm.tokenizer, text)
        t1 = time.perf_counter()
        fig = plots.model_grid(maps.attentions)
        t2 = time.perf_counter()
        fig.to_json()
        t3 = time.perf_counter()
        for key, dt in zip(stages, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            stages[key].append(dt)
    return {k: round(statistics.median(v), 3) for k, v in stages.items()}


def payloads() -> dict[str, int]:
    """JSON bytes of the 12 x 12 x 512 model view (random weights) and of one exact 512 head."""
    att = np.random.default_rng(0).dirichlet(np.ones(512), size=(12, 12, 512)).astype(np.float32)
    head = A.ViewMatrix("head", "head", att[0, 0], tuple(map(str, range(512))), tuple(map(str, range(512))))
    return {"grid_12x12x512_bytes": plots.payload_bytes(plots.model_grid(att)),
            "head_view_512_bytes": plots.payload_bytes(plots.head_heatmap(head))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install-bertviz", action="store_true", help=f"pip-install bertviz into {BERTVIZ_DIR}")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.install_bertviz and not BERTVIZ_DIR.is_dir():
        install_bertviz()
    lm = load_model(resolve("sentence-bert"), "base", attn_implementation="eager")
    text = PROSE * 20  # ~700 tokens: truncated to the model's 512
    renderers: dict[str, Callable] = {"ours (uint8 mosaic)": render_ours, "naive plotly float32 grid": render_naive}
    if have_bertviz():
        renderers[f"bertviz {BERTVIZ_VERSION} model_view"] = render_bertviz
    rows = measure(lm, text, renderers, args.repeats)
    base = rows["ours (uint8 mosaic)"]
    print(f"model view, 512 tokens, {lm.name} (6 layers x 12 heads), {args.threads} threads, CPU; "
          f"forward pass (shared by all): {base['forward_s']:.2f} s")
    print(f"{'method':<30} {'render s':>9} {'end-to-end s':>13} {'payload MB':>11} {'render x':>9} {'size x':>8}")
    for name, r in rows.items():
        print(f"{name:<30} {r['render_s']:9.2f} {r['end_to_end_s']:13.2f} {r['payload_bytes'] / 1e6:11.2f} "
              f"{r['render_s'] / base['render_s']:9.1f} {r['payload_bytes'] / base['payload_bytes']:8.1f}")
    result = {"tokens": 512, "model": lm.name, "threads": args.threads, "methods": rows,
              "library_path": ours_breakdown(lm, text), **payloads()}
    lib = result["library_path"]
    print(f"library path (explorer.tasks.attention.extract_attention + model_grid + JSON): "
          f"{sum(lib.values()):.2f} s = {lib}")
    print(f"12 layers x 12 heads x 512 grid: {result['grid_12x12x512_bytes'] / 1e6:.2f} MB (target < 5 MB); "
          f"one exact 512 x 512 head view: {result['head_view_512_bytes'] / 1e6:.2f} MB")
    out = ROOT / "benchmarks" / "results" / "attention.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
