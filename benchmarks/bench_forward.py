"""The Forward pass page's step-through, measured on the bundled Gemma 3 270M (float32, the CPU), ratios in one run.

The walk (explorer.internals.forward.walk.walk: the model's own forward with every module the card names hooked,
then every operation recomputed from its weights and compared, 455 steps at 6 tokens) against what a user would
write to see the insides: one forward with ``output_hidden_states=True, output_attentions=True``, which gives the
stream after each layer and the attention weights but none of the other operations. Both on a warm model (loaded
once, eager attention) at a short prompt and at the page's cap of 64 tokens; the issue asks that the page shows
its first step within 2 s of a warm model at 64 tokens. Runs alternate which goes first; each figure is the median
of the repeats, the ratio the median of back-to-back pairs. Writes benchmarks/results/forward.json and forward.md.

    python benchmarks/bench_forward.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_explain import paired  # noqa: E402

import explorer  # noqa: E402,F401  (offline defaults)

OUT = ROOT / "benchmarks" / "results"
SHORT = "The capital of France is"
# 64 tokens for Gemma 3's tokenizer: the step-through's cap (explorer.core.limits.FORWARD_TOKENS)
LONG = ("The city council met on Tuesday to discuss the new library, the repairs to the old bridge, the budget for "
        "next year and the bus routes, and after a long debate that lasted well into the evening the mayor "
        "finally said, to the surprise of everyone, that the capital of France is")


def measure(loaded, text: str, repeats: int) -> dict:
    import torch

    from explorer.internals.forward.walk import walk

    ids = loaded.tokenizer(text, return_tensors="pt")["input_ids"][:, :64]
    text = loaded.tokenizer.decode(ids[0], skip_special_tokens=True)

    def plain() -> object:
        with torch.inference_mode():
            return loaded.model(input_ids=ids, output_hidden_states=True, output_attentions=True, use_cache=False)

    walked = walk(loaded, text)  # warm-up
    plain()
    res = paired(lambda: walk(loaded, text), plain, repeats)
    res.pop("results")
    return {**res, "tokens": len(walked.tokens), "steps": len(walked.steps),
            "max_step_error": max(s.max_abs_error or 0.0 for s in walked.steps),
            "logits_error": walked.logits_max_abs_error}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import torch

    from explorer.internals.forward.run import ATTENTION, loading_task
    from explorer.runtime import bundled, loading
    from explorer.runtime.resolve import resolve

    bundled.ensure_converted()
    ref = resolve(bundled.KEY)
    loaded = loading.load_model(ref, loading_task(ref), attn_implementation=ATTENTION, device="cpu",
                                dtype="float32")
    rows = {name: measure(loaded, text, args.repeats) for name, text in (("short", SHORT), ("64 tokens", LONG))}
    info = {"model": ref.spec, "device": "cpu", "dtype": "float32", "threads": torch.get_num_threads(),
            "torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine()}
    OUT.mkdir(exist_ok=True)
    (OUT / "forward.json").write_text(json.dumps({"info": info, "rows": rows}, indent=2) + "\n")
    lines = ["# Forward pass: the step-through against one forward with hidden states and attentions", "",
             f"{info['model']}, {info['device']}, {info['dtype']}, {info['threads']} threads, torch {info['torch']}. "
             "Median of the repeats; ratio = walk / forward, the median of back-to-back pairs.", "",
             "| prompt | tokens | steps | walk (s) | forward with states (s) | ratio | max step error | logits error |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['tokens']} | {r['steps']} | {r['ours_s']:.3f} | {r['theirs_s']:.3f} | "
                     f"{r['ratio']:.1f}x | {r['max_step_error']:.2g} | {r['logits_error']:.2g} |")
    (OUT / "forward.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
