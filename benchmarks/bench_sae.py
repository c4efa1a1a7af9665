"""The feature lab's throughput on the bundled Gemma 3 270M (float32, the CPU): harvesting activations and training
a TopK SAE with the defaults' width and k, against eai-sparsify's SparseCoder trained on the same cached
activations (when it is importable: a benchmark only, never a dependency).

Harvest: fresh windows of the bundled corpus's training part read at the residual stream of the middle layer
(the forward stopped there), :data:`ROWS` tokens, timed end to end and removed afterwards. Training: both trainers
read the same batches of that harvest (``--epochs`` passes, batch 1,024) with their own optimiser settings (ours:
the recipe's; eai-sparsify's: its trainer's Adam at ``2e-4 / sqrt(width / 2**14)``, AuxK, unit-norm decoder rows),
and the variance explained is measured on the same held-out activations. Writes benchmarks/results/sae.json and
sae.md.

    python benchmarks/bench_sae.py [--rows 8192] [--epochs 2]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import explorer  # noqa: E402,F401  (offline defaults)

OUT = ROOT / "benchmarks" / "results"


def _fve(y, y_hat) -> float:
    return float(1 - (y - y_hat).pow(2).sum() / (y - y.mean(0)).pow(2).sum())


def _sparsify(got, recipe, held) -> dict | None:
    """eai-sparsify's SparseCoder trained as its trainer does, on the same batches; None when it is not importable."""
    try:
        import torch
        from sparsify import SparseCoder, SparseCoderConfig
    except ImportError:
        return None
    torch.manual_seed(recipe.seed)
    sae = SparseCoder(got.d_in, SparseCoderConfig(num_latents=recipe.width, k=recipe.k))
    opt = torch.optim.Adam(sae.parameters(), lr=2e-4 / (recipe.width / 2**14) ** 0.5)
    since = torch.zeros(recipe.width, dtype=torch.long)
    steps, began = 0, time.perf_counter()
    for epoch in range(recipe.epochs):
        for x, _ in got.batches(recipe.batch, recipe.seed, epoch):
            if steps == 0:  # its trainer starts the decoder bias at the first batch's mean
                sae.b_dec.data = x.mean(0).to(sae.dtype)
            out = sae(x, dead_mask=since > recipe.dead_tokens)
            loss = out.fvu + 1 / 32 * out.auxk_loss
            opt.zero_grad()
            loss.backward()
            sae.remove_gradient_parallel_to_decoder_directions()
            opt.step()
            sae.set_decoder_norm_to_unit_norm()
            since += x.shape[0]
            since[out.latent_indices.flatten()] = 0
            steps += 1
    seconds = time.perf_counter() - began
    with torch.no_grad():
        fve = _fve(held, sae(held).sae_out)
    return {"steps": steps, "seconds": seconds, "tokens_per_s": steps * recipe.batch / seconds, "fve": fve}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8_192)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    import torch

    from explorer.features import harvest, pipeline, recipe, trainer
    from explorer.runtime import bundled, loading
    from explorer.runtime.resolve import resolve
    from explorer.training import corpus

    bundled.ensure_converted()
    loaded = loading.load_model(resolve(bundled.KEY), "causal-lm", device="cpu", dtype="float32")
    r = recipe.with_changes(recipe.DEFAULT, tokens=args.rows, epochs=args.epochs, seed=int(time.time()) % 10_000)
    taps, about = pipeline.taps_of(loaded, r)
    text = corpus.bundled()
    began = time.perf_counter()
    got = harvest.harvest(loaded, "decoder", taps, None, text.train, text.name, r.tokens, r.seq_len, r.seed,
                          stamp=pipeline.stamp_of(loaded))
    harvest_s = time.perf_counter() - began
    try:
        held_windows = pipeline.heldout(loaded, text, 2_048, r.seq_len, 0)
        held = harvest._forward(loaded.model, "decoder", taps, held_windows.ids)[0][~held_windows.special]
        run, report = trainer.train(got, r)
        with torch.no_grad():
            ours = {"steps": report.steps, "seconds": report.seconds, "tokens_per_s": report.tokens_per_second,
                    "fve": _fve(held, trainer.fold(run)(held))}
        theirs = _sparsify(got, r, held)
    finally:
        shutil.rmtree(got.folder, ignore_errors=True)
    info = {"model": bundled.KEY, "site": about.where, "width": r.width, "k": r.k, "batch": r.batch,
            "rows": got.rows, "epochs": r.epochs, "threads": torch.get_num_threads(), "torch": torch.__version__,
            "python": platform.python_version(), "machine": platform.machine()}
    rows = {"harvest_tokens_per_s": got.rows / harvest_s, "harvest_s": harvest_s, "ours": ours, "sparsify": theirs,
            "default_run_minutes": (recipe.DEFAULT.tokens / (got.rows / harvest_s)
                                    + recipe.DEFAULT.steps * recipe.DEFAULT.batch / ours["tokens_per_s"]) / 60}
    OUT.mkdir(exist_ok=True)
    (OUT / "sae.json").write_text(json.dumps({"info": info, "rows": rows}, indent=2) + "\n")
    lines = ["# Feature lab: harvesting and training throughput", "",
             f"{info['model']}, {info['site']}, float32 on the CPU, {info['threads']} threads, torch {info['torch']}; "
             f"TopK width {r.width}, k {r.k}, batch {r.batch}, {got.rows:,} harvested tokens read {r.epochs} times.",
             "", f"Harvest: {rows['harvest_tokens_per_s']:,.0f} tokens/s. The default run (262,144 tokens, one "
             f"epoch) would take about {rows['default_run_minutes']:.1f} min here (harvest + training).", "",
             "| trainer | steps | tokens/s | held-out FVE |", "|---|---:|---:|---:|",
             f"| explorer | {ours['steps']} | {ours['tokens_per_s']:,.0f} | {ours['fve']:.3f} |"]
    if theirs is None:
        lines.append("| eai-sparsify | not installed here | | |")
    else:
        lines.append(f"| eai-sparsify | {theirs['steps']} | {theirs['tokens_per_s']:,.0f} | {theirs['fve']:.3f} |")
        lines += ["", f"Time ratio (explorer / eai-sparsify, training): "
                      f"{theirs['tokens_per_s'] / ours['tokens_per_s']:.2f}x"]
    (OUT / "sae.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
