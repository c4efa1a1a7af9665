"""Tokenization benchmark: our tokenize()/compare() against calling each Hugging Face tokenizer
directly, in the same process, on a 512-token text and on a 50,000-character text.

    python benchmarks/bench_tokenization.py      # writes benchmarks/results/tokenization.json

Columns (milliseconds, median of the repeats):
  hf_ids      tok(text)["input_ids"]: what a user calls to get ids only
  hf_view     tok(text, offsets + special mask) + convert_ids_to_tokens: ids *and* readable tokens
  ours        explorer.tokenization.tokenize(): the above plus word boundaries, readable byte
              pieces, unknown positions and the truncation point
ratio = ours / hf_view (the like-for-like comparison) and ours / hf_ids.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import median_ms  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

RESULTS = ROOT / "benchmarks" / "results"

PARAGRAPH = (
    "Transformer language models read text as a sequence of vocabulary pieces. BERT splits rare "
    "words such as taaaaasty or Transformerify into WordPiece fragments, GPT-2 works on bytes, and "
    "T5 uses a SentencePiece unigram model. Numbers like 3.14159 and 2024, emoji 😀, and words from "
    "other languages (Müller, Москва) show how differently the vocabularies cope. "
)


def text_of_bert_tokens(n: int) -> str:
    """A realistic text cut so that BERT uncased gives exactly ``n`` tokens ([CLS] + [SEP] included)."""
    from explorer.tokenization import tokenize

    long = PARAGRAPH * 20
    t = tokenize("bert-base-uncased", long)
    content = [o for o, sp in zip(t.offsets, t.special, strict=True) if not sp]
    return long[: content[n - 3][1]]  # n - 2 text tokens


def one_text(text: str, repeats: int) -> list[dict]:
    """Per tokenizer: HF direct (ids / ids + tokens) against our tokenize()."""
    from explorer.tokenization import TOKENIZERS, load_tokenizer, tokenize

    rows = []
    for name in TOKENIZERS:
        tok = load_tokenizer(name)

        def hf_view(tok=tok) -> None:
            enc = tok(text, return_offsets_mapping=True, return_special_tokens_mask=True)
            tok.convert_ids_to_tokens(enc["input_ids"])

        hf_ids = median_ms(lambda tok=tok: tok(text)["input_ids"], repeats)
        view = median_ms(hf_view, repeats)
        ours = median_ms(lambda name=name: tokenize(name, text), repeats)
        rows.append({"tokenizer": name, "tokens": tokenize(name, text).count, "hf_ids_ms": hf_ids,
                     "hf_view_ms": view, "ours_ms": ours, "ours_vs_hf_view": ours / view,
                     "ours_vs_hf_ids": ours / hf_ids})
    return rows


def compare_all(text: str, repeats: int) -> dict:
    """compare() over all five against the five HF calls (ids + tokens) in a loop."""
    from explorer.tokenization import TOKENIZERS, compare, load_tokenizer

    toks = [load_tokenizer(n) for n in TOKENIZERS]

    def hf_loop() -> None:
        for tok in toks:
            enc = tok(text, return_offsets_mapping=True)
            tok.convert_ids_to_tokens(enc["input_ids"])

    hf = median_ms(hf_loop, repeats)
    ours = median_ms(lambda: compare(text), repeats)
    return {"hf_all_ms": hf, "compare_ms": ours, "ratio": ours / hf}


def cold_load() -> dict:
    """Building every tokenizer from assets/ once (what the first page view pays)."""
    from explorer.tokenization import TOKENIZERS, load_tokenizer

    out = {}
    for name in TOKENIZERS:
        t = time.perf_counter()
        load_tokenizer(name)
        out[name] = (time.perf_counter() - t) * 1000
    return out


def page_work(text: str, repeats: int) -> dict:
    """Everything the page computes after compare(): chips, tables, three figures."""
    import pandas as pd

    from explorer import tokenization as tk
    from explorer.plots import tokenization as plots
    from explorer.tokenization import table

    results = tk.compare(text)

    def render() -> None:
        for t in results:
            plots.chips_html(t, 300)
        pd.DataFrame(table.token_rows(results)).to_csv(index=False)
        plots.counts_figure(results), plots.fertility_figure(results), plots.word_split_figure(results)

    return {"page_work_ms": median_ms(render, max(repeats // 5, 3))}


def _print(rows: list[dict], title: str) -> None:
    print(f"\n{title}")
    print(f"{'tokenizer':18s} {'tokens':>7s} {'hf_ids':>8s} {'hf_view':>8s} {'ours':>8s} {'ours/view':>9s} "
          f"{'ours/ids':>8s}")
    for r in rows:
        print(f"{r['tokenizer']:18s} {r['tokens']:7d} {r['hf_ids_ms']:8.2f} {r['hf_view_ms']:8.2f} "
              f"{r['ours_ms']:8.2f} {r['ours_vs_hf_view']:9.2f} {r['ours_vs_hf_ids']:8.2f}")


def main() -> None:
    import explorer  # noqa: F401  (offline defaults before transformers)

    load = cold_load()
    print("cold load (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in load.items()))
    short = text_of_bert_tokens(512)
    long = (PARAGRAPH * 200)[:50_000]
    out = {"cold_load_ms": load, "short_chars": len(short), "long_chars": len(long)}
    out["short"] = one_text(short, repeats=40)
    _print(out["short"], f"512-token text ({len(short)} characters), median ms")
    out["long"] = one_text(long, repeats=5)
    _print(out["long"], "50,000-character text, median ms")
    out["compare_short"] = compare_all(short, 40)
    out["compare_long"] = compare_all(long, 5)
    for key in ("compare_short", "compare_long"):
        c = out[key]
        print(f"{key}: compare() {c['compare_ms']:.1f} ms vs HF loop {c['hf_all_ms']:.1f} ms "
              f"(ratio {c['ratio']:.2f})")
    out.update({f"{k}_short": v for k, v in page_work(short, 20).items()})
    out.update({f"{k}_long": v for k, v in page_work(long, 5).items()})
    print(f"page work after compare(): {out['page_work_ms_short']:.0f} ms (512 tokens), "
          f"{out['page_work_ms_long']:.0f} ms (50,000 characters)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "tokenization.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
