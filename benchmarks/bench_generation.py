"""Generation with the bundled Gemma 3 270M: our step-by-step decoders vs ``model.generate``.

Same loaded model, same prompt, same strategy and seed, in the same process; runs alternate and the
best of ``--repeats`` is kept (the machine is shared). Also checks both give the same token ids.
In fresh subprocesses: load time after the first conversion (import and load apart) and resident
memory with the model loaded; with ``--dtypes``, float32 against bfloat16 on the CPU (load, memory,
prompt and per-token latency, top-10 agreement): the measurement behind explorer/runtime/bundled.py's choice.
Prints a table and writes benchmarks/results/generation.json.

    python benchmarks/bench_generation.py [--new-tokens 32] [--repeats 3] [--dtypes]

``--gpt2-random [--device cpu|cuda]`` instead times a GPT-2-size random-weight decoder (124M, built from
``GPT2Config()``, no download) on the chosen device: our greedy and beam-4 decoders against
``generate`` eager and ``generate(cache_implementation="static")``, per-token milliseconds and ratios
from the same run; writes benchmarks/results/generation-<shape>-<device>-<dtype>.json. ``--shape llama-1b
--dtype bfloat16`` times a 1B-class decoder the same way (Llama 3.2 1B's shape, random weights; for a GPU).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import explorer  # noqa: E402,F401  (offline defaults before transformers is imported)

PROMPT = "The history of the printing press begins in the fifteenth century, when"
PROMPTS = ["The capital of France is", "I ate the popcorn with a", "Once upon a time, there was a little",
           "def fibonacci(n):\n    ", "The quick brown fox jumps over the lazy", "Water boils at a temperature of",
           "My favourite colour is", "In 1969, the first man to walk on the moon was"]
# strategy -> (our settings, generate kwargs); generate's own sampling default adds top_k=50, so 0 turns it off
CASES = {
    "greedy": ({}, {"do_sample": False}),
    "sample": ({"temperature": 0.8}, {"do_sample": True, "temperature": 0.8, "top_k": 0}),
    "top-k": ({"temperature": 0.8, "top_k": 40}, {"do_sample": True, "temperature": 0.8, "top_k": 40}),
    "top-p": ({"temperature": 0.8, "top_p": 0.9}, {"do_sample": True, "temperature": 0.8, "top_k": 0, "top_p": 0.9}),
    "beam": ({"beams": 4}, {"do_sample": False, "num_beams": 4}),
}

LOAD_PROBE = """
import time, json, os, psutil
t0 = time.perf_counter()
import explorer, torch, transformers
from explorer.runtime.resolve import resolve
from explorer.tasks.generation import load_decoder, next_token
t1 = time.perf_counter()
loaded = load_decoder(resolve("gemma3-270m"))
t2 = time.perf_counter()
rss_loaded = psutil.Process().memory_info().rss
next_token(loaded, "The capital of France is", 5)
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "rss_loaded_mb": rss_loaded / 2**20,
                  "rss_after_forward_mb": psutil.Process().memory_info().rss / 2**20}))
"""


def _subprocess_json(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ours(loaded, strategy: str, new: int, seed: int):
    from explorer.tasks.generation import DecodingSettings, generate

    ours, _ = CASES[strategy]
    return generate(loaded, PROMPT, DecodingSettings(strategy, max_new_tokens=new, seed=seed, **ours)).token_ids


def _theirs(loaded, strategy: str, new: int, seed: int) -> list[int]:
    import torch

    ids = torch.tensor([loaded.tokenizer(PROMPT)["input_ids"]])
    torch.manual_seed(seed)
    with torch.inference_mode():
        out = loaded.model.generate(ids, max_new_tokens=new, **CASES[strategy][1])
    return out[0, ids.shape[1]:].tolist()


def speed(new: int, repeats: int) -> list[dict]:
    from explorer.runtime.resolve import resolve
    from explorer.tasks.generation import load_decoder

    loaded = load_decoder(resolve("gemma3-270m"))
    rows = []
    for strategy in CASES:
        # best wall time, and best process CPU time (less disturbed by other jobs on a shared machine)
        best = {k: float("inf") for k in ("ours", "generate", "ours_cpu", "generate_cpu")}
        for _ in range(repeats):
            for name, fn in (("ours", _ours), ("generate", _theirs)):
                t, c = time.perf_counter(), time.process_time()
                ids = fn(loaded, strategy, new, 0)
                best[name] = min(best[name], time.perf_counter() - t)
                best[f"{name}_cpu"] = min(best[f"{name}_cpu"], time.process_time() - c)
                if name == "ours":
                    ours_ids = ids
                else:
                    same = ids == ours_ids
        toks = len(ours_ids)
        rows.append({"strategy": strategy, "tokens": toks, "ours_tok_s": toks / best["ours"],
                     "generate_tok_s": toks / best["generate"], "ratio": best["generate"] / best["ours"],
                     "cpu_ratio": best["generate_cpu"] / best["ours_cpu"], "same_ids": same})
    return rows


DTYPE_PROBE = """
import json, sys, time, psutil, torch
import explorer
from transformers import AutoModelForCausalLM, AutoTokenizer
from explorer.runtime import bundled
path, dtype, prompts = str(bundled.ensure_converted()), getattr(torch, sys.argv[1]), json.loads(sys.argv[2])
t = time.perf_counter()
tok = AutoTokenizer.from_pretrained(path)
model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).eval()
load = time.perf_counter() - t
tops, prefill, decode = {}, [], []
with torch.inference_mode():
    for p in prompts:
        ids = tok(p, return_tensors="pt").input_ids
        t = time.perf_counter(); out = model(ids, use_cache=True); prefill.append(time.perf_counter() - t)
        tops[p] = out.logits[0, -1].float().topk(10).indices.tolist()
        cache, nxt = out.past_key_values, out.logits[0, -1].argmax().view(1, 1)
        t = time.perf_counter()
        for _ in range(8):
            o = model(nxt, past_key_values=cache, use_cache=True)
            cache, nxt = o.past_key_values, o.logits[0, -1].argmax().view(1, 1)
        decode.append((time.perf_counter() - t) / 8)
    long = tok("hello world " * 300, return_tensors="pt").input_ids[:, :400]
    t = time.perf_counter(); model(long); long_s = time.perf_counter() - t
med = lambda xs: sorted(xs)[len(xs) // 2]
print(json.dumps({"load_s": load, "rss_mb": psutil.Process().memory_info().rss / 2**20,
                  "prefill_ms": 1000 * med(prefill), "decode_ms_per_token": 1000 * med(decode),
                  "prefill_400_tokens_s": long_s, "tops": tops}))
"""


def dtypes() -> dict:
    runs = {d: _subprocess_json(DTYPE_PROBE, d, json.dumps(PROMPTS)) for d in ("float32", "bfloat16")}
    a, b = runs["float32"].pop("tops"), runs["bfloat16"].pop("tops")
    runs["agreement"] = {"top1": sum(a[p][0] == b[p][0] for p in a) / len(a),
                         "top5_overlap": sum(len(set(a[p][:5]) & set(b[p][:5])) for p in a) / (5 * len(a)),
                         "top10_overlap": sum(len(set(a[p]) & set(b[p])) for p in a) / (10 * len(a))}
    return runs


# Random-weight decoders built from a config on the device (no download; the GPU machine reaches no network).
# llama-1b is Llama 3.2 1B's shape (hidden 2048, 16 layers, MLP 8192, 32 query and 8 KV heads) with GPT-2's
# vocabulary so the shipped tokenizer decodes every id: 1.08 B parameters, the 1B class of a user's decoder.
SHAPES = {"gpt2": "GPT-2 small shape (124M), random weights",
          "llama-1b": "Llama 3.2 1B shape with GPT-2's vocabulary (1.08B), random weights"}


def _random_decoder(shape: str, device: str, dtype: str = "float32"):
    """(model, tokenizer): a decoder of ``shape`` (:data:`SHAPES`) with seeded random weights, on ``device``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    from explorer.tokenization import load_tokenizer

    tok = load_tokenizer("gpt2")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        if shape == "gpt2":
            model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok)))
        else:
            config = LlamaConfig(vocab_size=len(tok), hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                                 num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=2048,
                                 tie_word_embeddings=True, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
            model = LlamaForCausalLM(config)
        model = model.to(getattr(torch, dtype)).eval().to(device)
    return model, tok


def gpt2_speed(device: str, new: int, repeats: int, strategies: tuple[str, ...] = ("greedy", "beam"),
               shape: str = "gpt2", dtype: str = "float32") -> list[dict]:
    """Ours vs generate eager vs generate static, greedy and beam 4, per-token ms (best of repeats), wall and
    process CPU time (the CPU figure is less disturbed by other jobs on a shared machine)."""
    import torch

    from explorer.tasks.generation import DecodingSettings
    from explorer.tasks.generation.beam import BeamDecoder
    from explorer.tasks.generation.decoder import TokenDecoder

    model, tok = _random_decoder(shape, device, dtype)
    prompt = tuple(tok(PROMPT)["input_ids"])
    ids = torch.tensor([prompt], device=device)
    rows = []
    for strategy, beams in (("greedy", 1), ("beam", 4)):
        if strategy not in strategies:
            continue
        settings = DecodingSettings(strategy, beams=4, max_new_tokens=new)
        cls = BeamDecoder if strategy == "beam" else TokenDecoder
        runs = {"ours": lambda c=cls, st=settings: [x.token_id for x in c(model, tok, prompt, st).run()],
                "generate": lambda b=beams: _gen(model, ids, new, b),
                "generate_static": lambda b=beams: _gen(model, ids, new, b, cache_implementation="static")}
        best, cpu, out = {k: float("inf") for k in runs}, {k: float("inf") for k in runs}, {}
        for _ in range(repeats):
            for name, fn in runs.items():  # alternating: a burst of load hits every column alike
                t, c = time.perf_counter(), time.process_time()
                out[name] = fn()
                _sync(device)
                best[name] = min(best[name], time.perf_counter() - t)
                cpu[name] = min(cpu[name], time.process_time() - c)
        n = max(len(out["ours"]), 1)
        rows.append({"strategy": strategy, "tokens": n, **{f"{k}_ms_per_token": 1000 * v / n for k, v in best.items()},
                     **{f"{k}_cpu_ms_per_token": 1000 * v / n for k, v in cpu.items()},
                     "ratio_vs_generate": best["generate"] / best["ours"],
                     "ratio_vs_generate_static": best["generate_static"] / best["ours"],
                     "cpu_ratio_vs_generate": cpu["generate"] / cpu["ours"],
                     "same_ids": out["ours"] == out["generate"],
                     "same_ids_static": out["ours"] == out["generate_static"]})
    return rows


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _gen(model, ids, new: int, beams: int, **kw) -> list[int]:
    import torch

    with torch.inference_mode():
        out = model.generate(ids, max_new_tokens=new, do_sample=False, num_beams=beams, **kw)
    return out[0, ids.shape[1]:].tolist()


def gpt2_main(device: str, new: int, repeats: int, strategies: tuple[str, ...] = ("greedy", "beam"),
              shape: str = "gpt2", dtype: str = "float32") -> None:
    import platform

    import torch
    import transformers

    rows = gpt2_speed(device, new, repeats, strategies, shape, dtype)
    gpu = torch.cuda.get_device_name(0) if device.startswith("cuda") else None
    meta = {"device": device, "gpu": gpu, "cpu": platform.processor(), "threads": torch.get_num_threads(),
            "dtype": dtype, "torch": torch.__version__, "transformers": transformers.__version__,
            "load_average": list(__import__("os").getloadavg()), "model": SHAPES[shape]}
    print(json.dumps(meta))
    print(f"{'strategy':8} {'ours ms/tok':>11} {'gen ms/tok':>10} {'static ms/tok':>13} {'vs gen':>7} {'vs static':>9} "
          f"{'cpu vs gen':>10} same")
    for r in rows:
        print(f"{r['strategy']:8} {r['ours_ms_per_token']:11.2f} {r['generate_ms_per_token']:10.2f} "
              f"{r['generate_static_ms_per_token']:13.2f} {r['ratio_vs_generate']:7.2f} "
              f"{r['ratio_vs_generate_static']:9.2f} {r['cpu_ratio_vs_generate']:10.2f} "
              f"{r['same_ids']}/{r['same_ids_static']}")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / f"generation-{shape}-{device}-{dtype}.json").write_text(
        json.dumps({"machine": meta, "rows": rows}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dtypes", action="store_true", help="also compare float32 and bfloat16 (slow)")
    parser.add_argument("--gpt2-random", action="store_true", help="GPT-2-size random model, ratios vs generate")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--strategies", default="greedy,beam", help="with --gpt2-random: greedy, beam or both")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="gpt2",
                        help="with --gpt2-random: which random decoder")
    parser.add_argument("--dtype", default="float32", help="with --gpt2-random: float32, bfloat16 or float16")
    args = parser.parse_args()
    if args.gpt2_random:
        gpt2_main(args.device, args.new_tokens, args.repeats, tuple(args.strategies.split(",")), args.shape, args.dtype)
        return
    from explorer.runtime import bundled

    t = time.perf_counter()
    was_converted = bundled.is_converted(bundled.converted_dir())
    bundled.ensure_converted(progress=lambda f, what: print(f"{f:6.1%} {what}", file=sys.stderr))
    result: dict = {"first_conversion_s": None if was_converted else time.perf_counter() - t}
    result["load"] = _subprocess_json(LOAD_PROBE)
    print("load after conversion: import {import_s:.1f} s + load {load_s:.1f} s; resident {rss_loaded_mb:.0f} MB "
          "loaded, {rss_after_forward_mb:.0f} MB after one forward".format(**result["load"]))
    result["speed"] = speed(args.new_tokens, args.repeats)
    print(f"{'strategy':8} {'tokens':>6} {'ours tok/s':>10} {'generate':>9} {'ratio':>6} {'cpu ratio':>9} same ids")
    for r in result["speed"]:
        print(f"{r['strategy']:8} {r['tokens']:6d} {r['ours_tok_s']:10.2f} {r['generate_tok_s']:9.2f} "
              f"{r['ratio']:6.2f} {r['cpu_ratio']:9.2f} {r['same_ids']}")
    if args.dtypes:
        result["dtypes"] = dtypes()
        print(json.dumps(result["dtypes"], indent=1))
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "generation.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
