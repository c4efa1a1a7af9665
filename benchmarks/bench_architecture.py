"""Architecture benchmarks: every catalog variant analysed from a cold process, vs torchinfo,
and the first page render in a real browser after the server starts.

    python benchmarks/bench_architecture.py            # writes benchmarks/results/architecture.json

Targets: all variants in < 10 s and < 1.5 GB peak RSS on 2 cores; first render < 5 s.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"

COLD = """
import time, json, resource
t0 = time.perf_counter()
import explorer
from explorer.architecture import analysis, catalog
t1 = time.perf_counter()
for key in catalog.keys():
    analysis.analyse_variant(key, shapes=False)
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "analyse_s": t2 - t1, "total_s": t2 - t0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def cold_process() -> dict:
    """Tree + breakdown + FLOPs of every variant in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", COLD], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def versus_torchinfo() -> dict:
    """Same meta models, same process: our tree + breakdown against torchinfo.summary (no input)."""
    from torchinfo import summary

    from explorer.architecture import build, catalog, components, layertree

    ours = theirs = 0.0
    overcount = {}
    for key in catalog.keys():
        v = catalog.get_variant(key)
        config = build.make_config(key)
        model = build.instantiate(config, v.head, "meta", v.extra)
        t = time.perf_counter()
        tree = layertree.layer_tree(model, config)
        components.breakdown(model, config)
        ours += time.perf_counter() - t
        t = time.perf_counter()
        stats = summary(model, verbose=0, depth=8)
        theirs += time.perf_counter() - t
        if stats.total_params != tree.params:
            overcount[key] = stats.total_params - tree.params
    return {"ours_s": ours, "torchinfo_s": theirs, "speed_ratio": theirs / ours,
            "torchinfo_overcounts": overcount}


def first_render() -> dict:
    """Seconds from `streamlit run` to the overview's title visible in headless Chromium."""
    import shutil
    import socket

    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"),
                             "--server.headless", "true", "--server.port", str(port)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"),
                                        args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            for _ in range(200):
                try:
                    page.goto(f"http://127.0.0.1:{port}/")
                    break
                except Exception:
                    time.sleep(0.1)
            page.get_by_text("Transformer Explorer").first.wait_for(timeout=60_000)
            title_s = time.perf_counter() - t0
            page.locator("[data-testid='stPlotlyChart']").first.wait_for(timeout=120_000)
            chart_s = time.perf_counter() - t0
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return {"first_render_s": title_s, "catalog_chart_s": chart_s}


def main() -> None:
    results = {"cold_process": cold_process(), "versus_torchinfo": versus_torchinfo(), "browser": first_render()}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "architecture.json").write_text(json.dumps(results, indent=2))
    c, v, b = results["cold_process"], results["versus_torchinfo"], results["browser"]
    print(f"cold: import {c['import_s']:.2f}s + analyse all {c['analyse_s']:.2f}s = {c['total_s']:.2f}s "
          f"(target < 10 s), peak RSS {c['peak_rss_mb']:.0f} MB (target < 1536)")
    print(f"tree+breakdown vs torchinfo.summary: {v['ours_s']:.2f}s vs {v['torchinfo_s']:.2f}s "
          f"(ratio {v['speed_ratio']:.2f}x); torchinfo overcounts {len(v['torchinfo_overcounts'])} variants")
    print(f"browser: first render {b['first_render_s']:.2f}s (target < 5 s), catalog chart {b['catalog_chart_s']:.2f}s")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
