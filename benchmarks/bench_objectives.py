"""Benchmark: every objective on a 512-token text (one draw, and the page's 500-draw statistics),
and BERT MLM against transformers' DataCollatorForLanguageModeling on the same tokens.

Run: ``python benchmarks/bench_objectives.py``; writes benchmarks/results/objectives.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from timing import median_ms  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

import explorer  # noqa: E402,F401  (offline defaults first)
from explorer.objectives import STRATEGIES, run  # noqa: E402
from explorer.objectives.stats import draw_stats  # noqa: E402
from explorer.objectives.text import EXAMPLE_TEXT, EXAMPLE_TRANSLATION, prepare  # noqa: E402

LONG_TEXT = " ".join([EXAMPLE_TEXT] * 40)  # well over 512 tokens for every tokenizer: cut to 512
PAGE_DRAWS = 500


def bench_strategies() -> list[dict]:
    rows = []
    for name, s in STRATEGIES.items():
        p = prepare(LONG_TEXT, s.tokenizer, s.frame, LONG_TEXT if s.pair else None)
        prep_ms = median_ms(
            lambda s=s: prepare(LONG_TEXT, s.tokenizer, s.frame, EXAMPLE_TRANSLATION if s.pair else None), 3)
        one_ms = median_ms(lambda name=name, p=p: run(name, p.tokens, 0, p.vocab))
        stats_ms = median_ms(lambda name=name, p=p: draw_stats(name, p.tokens, p.vocab, 0, PAGE_DRAWS), 1)
        rows.append({"strategy": name, "tokens": len(p.tokens), "prepare_ms": round(prep_ms, 2),
                     "one_draw_ms": round(one_ms, 3), f"stats_{PAGE_DRAWS}_ms": round(stats_ms, 1),
                     "page_total_ms": round(prep_ms + one_ms + stats_ms, 1)})
    return rows


def bench_collator() -> dict:
    """Our BERT MLM (tokens in, structured result out) vs the HF collator (ids in, tensors out)."""
    from transformers import DataCollatorForLanguageModeling

    from explorer.tokenization import load_tokenizer

    s = STRATEGIES["bert"]
    p = prepare(LONG_TEXT, s.tokenizer, s.frame)
    tok = load_tokenizer("bert-base-uncased")
    ids = tok.convert_tokens_to_ids(list(p.tokens))
    collator = DataCollatorForLanguageModeling(tok, mlm_probability=0.15, return_tensors="pt")
    torch.manual_seed(0)
    hf = median_ms(lambda: collator([{"input_ids": ids}]), 21)
    ours = median_ms(lambda: run("bert", p.tokens, 0, p.vocab), 21)
    # what a learner would need on top of the collator to *see* the result: ids back to tokens
    def hf_readable():
        batch = collator([{"input_ids": ids}])
        return tok.convert_ids_to_tokens(batch["input_ids"][0].tolist())
    hf_read = median_ms(hf_readable, 21)
    return {"tokens": len(p.tokens), "ours_ms": round(ours, 3), "collator_ms": round(hf, 3),
            "collator_plus_tokens_ms": round(hf_read, 3), "ratio_ours_vs_collator": round(ours / hf, 2),
            "ratio_ours_vs_collator_plus_tokens": round(ours / hf_read, 2)}


def main() -> None:
    torch.set_num_threads(1)
    rows = bench_strategies()
    coll = bench_collator()
    width = max(len(r["strategy"]) for r in rows)
    print(f"{'strategy':<{width}}  tokens  prepare ms  1 draw ms  {PAGE_DRAWS} draws ms  page total ms  < 1 s")
    for r in rows:
        ok = "yes" if r["page_total_ms"] < 1000 else "NO"
        print(f"{r['strategy']:<{width}}  {r['tokens']:>6}  {r['prepare_ms']:>10.2f}  {r['one_draw_ms']:>9.3f}  "
              f"{r[f'stats_{PAGE_DRAWS}_ms']:>13.1f}  {r['page_total_ms']:>13.1f}  {ok}")
    print(f"\nBERT MLM on {coll['tokens']} tokens: ours {coll['ours_ms']:.3f} ms, DataCollatorForLanguageModeling "
          f"{coll['collator_ms']:.3f} ms (ratio {coll['ratio_ours_vs_collator']}x); collator + ids->tokens "
          f"{coll['collator_plus_tokens_ms']:.3f} ms (ratio {coll['ratio_ours_vs_collator_plus_tokens']}x)")
    out = ROOT / "benchmarks" / "results" / "objectives.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"strategies": rows, "collator": coll, "page_draws": PAGE_DRAWS}, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
