"""Benchmark of the attention-maps area: the model view of a 512-token text, end to end.

End to end = forward pass with attention outputs + figure build + JSON serialisation (what
Streamlit sends to the browser), with the bundled all-MiniLM-L6-v2 (6 layers x 12 heads) on
the CPU, model already loaded. Compared in the same process with what a user would otherwise do:

- bertviz's ``model_view`` (``html_action="return"``): it embeds every layer x head x L x L
  weight as JSON text in the page. bertviz is not a project dependency: it is installed with
  ``--install-bertviz`` into a cache directory outside the repository (``--no-deps``: it only
  needs torch/transformers/IPython, already here), else that row is skipped;
- a naive plotly grid: ``make_subplots(layers, heads)`` of full-precision float32 heatmaps.

Also reports the payload of the 12 layers x 12 heads x 512 tokens case (the issue's 5 MB
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import explorer  # noqa: E402,F401  (offline defaults)
from explorer import attention as A  # noqa: E402
from explorer.loading import load_model  # noqa: E402
from explorer.plots import attention as plots  # noqa: E402

BERTVIZ_DIR = Path.home() / ".cache" / "transformer-explorer" / "bertviz"
BERTVIZ_VERSION = "1.4.1"
REPEATS = 3
PROSE = ("The committee postponed the vote because its members had not read the report, and the "
         "chair, who had written most of it herself, said she would present it again next week. ")


def timed(fn: Callable[[], int], repeats: int = REPEATS) -> tuple[float, int]:
    """Median seconds of ``fn`` over ``repeats`` runs (after one warm-up) and its last result."""
    fn()
    times, out = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def forward(lm, text: str) -> tuple[tuple[torch.Tensor, ...], list[str]]:
    """What a bertviz user writes: one forward with ``output_attentions=True``, truncated to 512."""
    enc = lm.tokenizer(text, return_tensors="pt", truncation=True, max_length=512)
    with torch.inference_mode():
        out = lm.model(**enc, output_attentions=True)
    return out.attentions, lm.tokenizer.convert_ids_to_tokens(enc["input_ids"][0])


def ours(lm, text: str) -> int:
    maps = A.extract_attention(lm.model, lm.tokenizer, text)
    return len(plots.model_grid(maps.attentions, untrained=False).to_json().encode())


def naive_grid(lm, text: str) -> int:
    from plotly.subplots import make_subplots

    att, _ = forward(lm, text)
    fig = make_subplots(rows=len(att), cols=att[0].shape[1], horizontal_spacing=0.005, vertical_spacing=0.01)
    for layer, a in enumerate(att):
        for head in range(a.shape[1]):
            fig.add_heatmap(z=a[0, head].numpy(), row=layer + 1, col=head + 1, coloraxis="coloraxis")
    return len(fig.to_json().encode())


def bertviz_view(lm, text: str) -> int:
    from bertviz import model_view

    att, tokens = forward(lm, text)
    return len(model_view(att, tokens, html_action="return").data.encode())


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
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.install_bertviz and not BERTVIZ_DIR.is_dir():
        install_bertviz()
    lm = load_model("sentence-bert", "base", attn_implementation="eager")
    text = PROSE * 20  # ~700 tokens: truncated to the model's 512
    rows = {"ours (uint8 grid)": timed(lambda: ours(lm, text)),
            "naive plotly float32 grid": timed(lambda: naive_grid(lm, text), repeats=1)}
    if have_bertviz():
        rows[f"bertviz {BERTVIZ_VERSION} model_view"] = timed(lambda: bertviz_view(lm, text), repeats=1)
    base_t, base_b = rows["ours (uint8 grid)"]
    print(f"model view, 512 tokens, {lm.name} (6 layers x 12 heads), {args.threads} threads, CPU")
    print(f"{'method':<30} {'seconds':>8} {'payload MB':>11} {'time x ours':>12} {'size x ours':>12}")
    for name, (sec, size) in rows.items():
        print(f"{name:<30} {sec:8.2f} {size / 1e6:11.2f} {sec / base_t:12.1f} {size / base_b:12.1f}")
    result = {"tokens": 512, "model": lm.name, "threads": args.threads,
              "methods": {k: {"seconds": round(s, 3), "payload_bytes": b} for k, (s, b) in rows.items()},
              "ours_stages": ours_breakdown(lm, text), **payloads()}
    print("ours by stage:", result["ours_stages"])
    print(f"12 layers x 12 heads x 512 grid: {result['grid_12x12x512_bytes'] / 1e6:.2f} MB (target < 5 MB); "
          f"one exact 512 x 512 head view: {result['head_view_512_bytes'] / 1e6:.2f} MB")
    out = ROOT / "benchmarks" / "results" / "attention.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
