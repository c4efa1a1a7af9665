"""Benchmark of the patterns area: masks and cost curves at 4,096 tokens, and the page payload.

Compared in the same process with what a user would otherwise write: dense torch masks the way
the Hugging Face code builds them (``tril``, ``tril ^ tril(-w)``, a dense ``|i-j| <= w/2`` band,
``kron`` of BigBird's block layout), counted with ``mask.sum()`` at every length of the curve;
and, for the payload, a plotly heatmap of the unpooled mask.

Run: ``python benchmarks/bench_patterns.py`` -> table on stdout, benchmarks/results/patterns.json.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import explorer  # noqa: E402,F401  (offline defaults)
from explorer.architecture import patterns as P  # noqa: E402
from explorer.architecture.patterns import costs, kinds, masks  # noqa: E402
from explorer.plots import patterns as plots  # noqa: E402

T = 4096
CURVE_LENGTHS = (512, 1024, 2048, 4096)  # the dense baseline cannot go to 16k on a shared 2-core box
SPECS = {
    "full": kinds.full(T),
    "causal": kinds.causal(T),
    "cross": kinds.cross(T // 2, T),
    "local-causal (GPT-Neo, w=256)": kinds.local_causal(T, 256),
    "sliding-window (Longformer, w=512, 3 global)": kinds.sliding_window(T, 512, (0, 5, 17)),
    "block-sparse (BigBird, b=64, r=3)": kinds.block_sparse(T, 64, 3, seed=0),
}


def torch_mask(spec: P.PatternSpec) -> torch.Tensor:
    """Dense (q, k) bool mask built with torch, as the reference implementations do."""
    q, k = spec.q_len, spec.k_len
    kind = kinds.effective_kind(spec)
    if kind in ("full", "cross"):
        return torch.ones(q, k, dtype=torch.bool)
    bias = torch.tril(torch.ones(q, k, dtype=torch.bool))
    if kind == "causal":
        return bias
    if kind == "local-causal":  # GPT-Neo: bias ^ tril(bias, -window_size)
        return torch.bitwise_xor(bias, torch.tril(bias, -spec.window))
    if kind == "sliding-window":
        i = torch.arange(q)[:, None]
        band = (i - torch.arange(k)[None, :]).abs() <= spec.window // 2
        g = torch.zeros(q, dtype=torch.bool)
        g[list(spec.global_positions)] = True
        return band | g[:, None] | g[None, :]
    layout = torch.from_numpy(masks.bigbird_block_layout(spec).astype(np.uint8))
    b = spec.block_size
    return torch.kron(layout, torch.ones(b, b, dtype=torch.uint8)).bool()[:q, :k]


def best_ms(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return min(times)


def bench_kinds() -> list[dict]:
    rows = []
    for name, spec in SPECS.items():
        ours_mask = best_ms(lambda s=spec: P.build_mask(s))
        ref_mask = best_ms(lambda s=spec: torch_mask(s))
        assert int(torch_mask(spec).sum()) == P.nnz_closed_form(spec) == int(P.build_mask(spec).sum())
        ours_curve = best_ms(lambda s=spec: costs.cost_curve(s, CURVE_LENGTHS))
        ref_curve = best_ms(lambda s=spec: [int(torch_mask(s.with_length(t)).sum()) for t in CURVE_LENGTHS], 3)
        pooled = best_ms(lambda s=spec: masks.pooled_mask(s, 512), 3)
        rows.append({"kind": name, "mask_ms": ours_mask, "torch_mask_ms": ref_mask,
                     "curve_ms": ours_curve, "torch_count_curve_ms": ref_curve, "pooled_512_ms": pooled,
                     "curve_speedup": ref_curve / ours_curve, "mask_ratio": ref_mask / ours_mask})
    return rows


def bench_full_curve() -> dict:
    """Closed-form curve over the page's whole grid (21 lengths, 512..16,384), all kinds."""
    ms = best_ms(lambda: [costs.cost_curve(s) for s in SPECS.values()])
    return {"kinds": len(SPECS), "lengths": len(costs.default_lengths()), "ms": ms}


def figure_bytes(fig) -> int:
    return len(fig.to_json().encode())


def bench_payload() -> dict:
    """Bytes sent to the browser: pooled heatmaps vs one unpooled 4,096 x 4,096 heatmap."""
    out = {}
    for cells in (256, 512):
        total = 0
        for spec in SPECS.values():
            mask, f = masks.pooled_mask(spec, cells)
            total += figure_bytes(plots.mask_heatmap(mask, f, "x"))
        out[f"six_heatmaps_{cells}_cells_bytes"] = total
    curves = [costs.cost_curve(s) for s in SPECS.values()]
    out["cost_chart_bytes"] = figure_bytes(plots.cost_chart(curves))
    out["one_unpooled_4096_heatmap_bytes"] = figure_bytes(plots.mask_heatmap(P.build_mask(SPECS["causal"]), 1, "x"))
    return out


def page_payload() -> dict:
    """Plotly bytes and render time of the page's default view (AppTest, same process).

    The first run computes everything; the second hits st.cache_data (what a user sees when
    they come back to a view). Empty if the page cannot run here.
    """
    try:
        from streamlit.testing.v1 import AppTest

        out = {}
        for run in ("cold", "warm"):
            at = AppTest.from_file(str(ROOT / "pages" / "attention_patterns.py"), default_timeout=300)
            t0 = time.perf_counter()
            at.run()
            out[f"page_{run}_render_ms"] = (time.perf_counter() - t0) * 1e3
            if at.exception:
                return {}
        out["page_default_bytes"] = sum(len(e.proto.spec.encode()) for e in at.get("plotly_chart"))
        return out
    except Exception:  # noqa: BLE001  (the benchmark still reports the rest)
        return {}


def main() -> None:
    torch.set_num_threads(2)
    rows = bench_kinds()
    print(f"masks and cost curves at T={T} (best of runs, ms); baseline = dense torch masks + .sum()")
    print(f"{'kind':<46}{'mask':>8}{'torch':>8}{'curve':>9}{'torch curve':>13}{'speedup':>9}{'pool512':>9}")
    for r in rows:
        print(f"{r['kind']:<46}{r['mask_ms']:8.1f}{r['torch_mask_ms']:8.1f}{r['curve_ms']:9.3f}"
              f"{r['torch_count_curve_ms']:13.1f}{r['curve_speedup']:8.0f}x{r['pooled_512_ms']:9.1f}")
    full_curve = bench_full_curve()
    print(f"closed-form curves, {full_curve['kinds']} kinds x {full_curve['lengths']} lengths up to 16,384: "
          f"{full_curve['ms']:.1f} ms")
    payload = bench_payload()
    for k, v in payload.items():
        print(f"{k:<40}{v / 1e6:10.3f} MB")
    page = page_payload()
    for k, v in page.items():
        print(f"{k:<40}{v / 1e6:10.3f} MB" if k.endswith("bytes") else f"{k:<40}{v:10.0f} ms")
    ratio = payload["one_unpooled_4096_heatmap_bytes"] / payload["six_heatmaps_256_cells_bytes"]
    print(f"one unpooled 4096^2 heatmap / six pooled 256-cell heatmaps: {ratio:.0f}x")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    summary = {"seq_len": T, "kinds": rows, "full_curve": full_curve, "payload": payload, "page": page,
               "median_curve_speedup": statistics.median(r["curve_speedup"] for r in rows)}
    (out / "patterns.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
