"""A compression study: one model through several methods, each measured beside the original.

``run("sentence-bert", ["int8", "prune-50"])`` loads the model once (float32, through the shared cache),
measures the original (size, latency, the reference outputs), then for each method makes a compressed
**copy** (:func:`explorer.compression.methods.apply`), measures it the same way, answers one prompt with it,
and drops it before the next. The cached original is never modified. Bad method names fail before any
model is loaded; a method this device cannot run fails before its copy is made.

Latency workload: an encoder embeds one batch of 16 bundled sentences (throughput in sentences/s); a
decoder scores the held-out text in one forward (up to 256 tokens; throughput in tokens/s). Each copy is
timed alternately with the original (:func:`explorer.compression.measure.time_pair`): every row carries the
original's latency from its own run, so the ratio holds on a machine other jobs share.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch

from explorer.compression import earlyexit, measure, methods, quality
from explorer.compression.heads import HeadScore
from explorer.compression.result import Progress, Row, Study
from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice
from explorer.runtime import bundled, cancel, modelkind, placement
from explorer.runtime.loading import LoadedModel, load_model

__all__ = ["DEFAULT_CANDIDATES", "DEFAULT_PROMPTS", "MAX_METHODS", "Row", "Study", "combine", "run"]

MAX_METHODS = 12  # each method is a full copy and a full measurement: a long list would hold a worker for minutes
PROMPT_CHARS = 500  # the side-by-side answers need a sentence, not a document (each copy answers it again)
DEFAULT_PROMPTS = {"encoder": "A man is playing a guitar.", "decoder": "The capital of France is"}
DEFAULT_CANDIDATES = ("A musician plays music.", "A man eats a sandwich.", "A woman plays the violin.",
                      "The stock market fell.")
Q4_NOTE = Notice("info", "The original here is Gemma 3 270M as bundled: the 4-bit Q4_K_M GGUF dequantised to float32. "
                         "Every figure compares with that already-quantised model, not with Google's bf16 weights.")
DENSE_NOTE = Notice("info", "prune-N, heads-N and mheads-N write zeros into dense matrices: the size on disk and the latency "
                            "stay those of the dense model; only a sparse format or kernel would turn the zeros "
                            "into savings.")


def _parse_all(names: list[str] | tuple[str, ...], device: str) -> list[methods.Method]:
    if not names:
        raise ExplorerError(f"No compression method given: pick one or more of {methods.valid_names()}.")
    if len(names) > MAX_METHODS:
        raise ExplorerError(f"{len(names)} methods asked; at most {MAX_METHODS} run in one study: split the list.")
    parsed = list(dict.fromkeys(methods.parse(n) for n in names))  # duplicates run once
    for m in parsed:
        reason = methods.available(m, device)
        if reason:
            raise ExplorerError(reason)
    return parsed


def _workload(loaded: LoadedModel, decoder: bool, device: str) -> tuple[Callable[[torch.nn.Module], Any], int]:
    """(one timed call on a model, the items it handles): a batch of sentences, or the held-out tokens."""
    tok = loaded.tokenizer
    if decoder:
        ids = tok(quality.heldout_text(), return_tensors="pt")["input_ids"][:, :quality.MAX_TOKENS].to(device)
        return (lambda m: m(input_ids=ids)), int(ids.shape[1])
    sentences = [s for pair in quality.sentence_pairs()[:8] for s in pair]  # 16 sentences
    enc = {k: v.to(device) for k, v in tok(sentences, return_tensors="pt", padding=True).items()}
    return (lambda m: m(**enc)), len(sentences)


def _measure(model: torch.nn.Module, loaded: LoadedModel, ref: quality.Reference, method: str, description: str,
             setup: tuple[Any, ...]) -> Row:
    (call, items), device, repeats, prompt, candidates = setup
    if model is loaded.model:
        base = timing = measure.time_call(lambda: call(model), items, device, repeats=repeats)
    else:
        base, timing = measure.time_pair(lambda: call(loaded.model), lambda: call(model), items, device,
                                         repeats=repeats)
    return Row(method, description, measure.disk_bytes(model), measure.memory_bytes(model), timing.latency_ms,
               timing.throughput, base.latency_ms, quality.measure(model, loaded.tokenizer, ref, device), methods.sparsity(model),
               quality.answer(model, loaded.tokenizer, ref.decoder, prompt, candidates, device))


def _notices(key: str, parsed: list[methods.Method]) -> tuple[Notice, ...]:
    out = [Q4_NOTE] if key == bundled.KEY else []
    if any(m.kind in ("prune", "heads", "mheads") for m in parsed):
        out.append(DENSE_NOTE)
    return tuple(out)


def run(key: str, method_names: list[str] | tuple[str, ...], *, device: str | None = None,
        models_dir: str | None = None, prompt: str | None = None, candidates: tuple[str, ...] = DEFAULT_CANDIDATES,
        repeats: int = measure.REPEATS, progress: Progress | None = None) -> Study:
    """Measure ``key`` (a catalog key or directory) and a compressed copy per method on ``device``."""
    report = progress or (lambda _f, _t: None)
    where = placement.resolve_device(device)
    parsed = _parse_all(method_names, where)  # before any model loads
    if any(m.kind == "exit" for m in parsed):
        return _early_exit(key, parsed, where, models_dir, prompt, repeats, report)
    decoder = modelkind.is_decoder(key, models_dir)
    report(0.0, f"Loading {key}…")
    loaded = load_model(key, "causal-lm" if decoder else "base", models_dir=models_dir, device=where,
                        dtype="float32", purpose="the Compression lab")
    where = loaded.device  # what actually ran (an out-of-memory fallback moves it to the CPU)
    shown, said = quality.prompt_used(prompt, DEFAULT_PROMPTS["decoder" if decoder else "encoder"], PROMPT_CHARS)
    setup = (_workload(loaded, decoder, where), where, repeats, shown, list(candidates))
    report(0.05, "Measuring the original…")
    ref = quality.reference(loaded.model, loaded.tokenizer, decoder, where)
    baseline = _measure(loaded.model, loaded, ref, "original", "the model as loaded (float32)", setup)
    ranked = None if decoder or not any(m.kind == "mheads" for m in parsed) else _encoder_ranking(key, models_dir, where, report)
    rows: list[Row] = []
    stopped: tuple[Notice, ...] = ()
    try:
        for i, m in enumerate(parsed):
            cancel.check()  # a server request out of time keeps the methods measured so far
            report(0.1 + 0.9 * i / len(parsed), f"{m.name}: compressing a copy and measuring it…")
            rows.append(_method_row(loaded, ref, m, setup, ranked))
    except cancel.RequestStopped as err:
        if err.reason == "gone" or not rows:  # nobody will see it, or nothing to show: not a result
            raise
        stopped = (Notice("stopped", f"{err} Measured: {len(rows)} of {len(parsed)} methods."),)
    report(1.0, "Done.")
    return Study(key, loaded.name, decoder, where, placement.device_name(where), "float32",
                 "tokens/s" if decoder else "sentences/s", shown, baseline, tuple(rows),
                 said + _notices(key, parsed) + stopped)



def _early_exit(key: str, parsed: list[methods.Method], where: str, models_dir: str | None, prompt: str | None,
                repeats: int, report: Progress) -> Study:
    if not all(m.kind == "exit" for m in parsed):
        raise ExplorerError("exit-S measures a lab model's trained exits, not a compressed copy: run it apart from "
                            "the other methods (one study with only exit-S methods).")
    return earlyexit.run(key, parsed, device=where, models_dir=models_dir, prompt=prompt, repeats=repeats,
                         progress=report)


def _encoder_ranking(key: str, models_dir: str | None, where: str, report: Progress) -> list[HeadScore]:
    """mheads-N on an encoder: Michel et al.'s importance for its masked-LM loss, measured on the checkpoint's
    masked-LM model (the same encoder with its MLM head), which the base model the study measures lacks."""
    report(0.08, "mheads-N: ranking the heads by the masked-LM loss…")
    try:
        mlm = load_model(key, "masked-lm", models_dir=models_dir, device=where, dtype="float32",
                         purpose="the Compression lab")
    except ExplorerError as err:
        raise ExplorerError(f"mheads-N ranks an encoder's heads by its own masked-LM loss: {err} Or pick heads-N, "
                            "the data-free proxy, which needs no loss.") from err
    return methods.masked_scores(mlm.model, mlm.tokenizer, where)


def _method_row(loaded: LoadedModel, ref: quality.Reference, m: methods.Method, setup: tuple[Any, ...],
                ranked: list[HeadScore] | None = None) -> Row:
    """Compress a copy, measure it, drop it (the next method starts from the original again)."""
    copy = methods.apply(loaded.model, m, setup[1], loaded.name, loaded.tokenizer, ranked)
    try:
        return _measure(copy, loaded, ref, m.name, methods.FIXED.get(m.name, methods.PATTERNS.get(m.kind, "")),
                        setup)
    finally:
        del copy
        gc.collect()


def combine(parts: list[Study]) -> Study:
    """Studies of the same model, device and prompt (one method each, say) as one: the first's original,
    every part's rows in order (a method asked twice once), the notices of all without repeats."""
    if not parts:
        raise ExplorerError("No compression method has been measured yet: pick one and run it.")
    first = parts[0]
    rows = {r.method: r for p in parts for r in p.rows}
    notices = tuple(dict.fromkeys(n for p in parts for n in p.notices))
    return replace(first, rows=tuple(rows.values()), notices=notices)
