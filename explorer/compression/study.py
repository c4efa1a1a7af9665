"""A compression study: one model through several methods, each measured beside the original.

``run("sentence-bert", ["int8", "prune-50"])`` checks every method first (an unknown name, or one this device
cannot run, fails before any model loads), then measures the original **once** for its
:class:`~explorer.compression.result.Settings` (:func:`baseline`: the model loaded in float32 through the shared
cache, its size, latency, reference outputs and answer), then each method against it (:func:`method_row`: a
compressed **copy** made by :func:`explorer.compression.methods.apply`, measured the same way, answering the same
prompt, dropped before the next). The cached original is never modified. ``exit-S`` methods measure a lab model's
trained exits instead (:mod:`explorer.compression.earlyexit`), in the same two steps. The
:class:`~explorer.compression.result.Study` carries every copy's ratios to the original (size, latency, quality),
which the page, the chart and the CLI show.

The page caches the original and each method apart (each method is its own server request with its own time
budget, and one measured before answers from the cache): it passes its cached functions as ``original`` and
``one_method``; the checks, the order, the progress per method and a stopped request's partial result stay here.

Latency workload: an encoder embeds one batch of 16 bundled sentences (throughput in sentences/s); a
decoder scores the held-out text in one forward (up to 256 tokens; throughput in tokens/s). Each copy is
timed alternately with the original (:func:`explorer.compression.measure.time_pair`): every row carries the
original's latency from its own run, so the ratio holds on a machine other jobs share (this pairing is part of
measuring the copy; the original's own row, reference outputs and answer are measured once).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import replace

import torch

from explorer.compression import earlyexit, measure, methods, quality
from explorer.compression.heads import HeadScore
from explorer.compression.result import Baseline, Progress, Row, Settings, Study
from explorer.core.errors import ExplorerError
from explorer.core.limits import COMPRESSION_PROMPT_CHARS
from explorer.core.notices import Notice
from explorer.runtime import bundled, cancel, placement, resolve
from explorer.runtime.loading import LoadedModel, load_model
from explorer.runtime.resolve import ModelRef

__all__ = ["DEFAULT_CANDIDATES", "DEFAULT_PROMPTS", "MAX_METHODS", "Baseline", "OneMethod", "Original", "Row",
           "Settings", "Study", "baseline", "encoder_ranking", "method_row", "run"]

MAX_METHODS = 12  # each method is a full copy and a full measurement: a long list would hold a worker for minutes
DEFAULT_PROMPTS = {"encoder": "A man is playing a guitar.", "decoder": "The capital of France is"}
DEFAULT_CANDIDATES = ("A musician plays music.", "A man eats a sandwich.", "A woman plays the violin.",
                      "The stock market fell.")
Q4_NOTE = Notice("info", "The original here is Gemma 3 270M as bundled: the 4-bit Q4_K_M GGUF dequantised to float32. "
                         "Every figure compares with that already-quantised model, not with Google's bf16 weights.")
DENSE_NOTE = Notice("info", "prune-N, heads-N and mheads-N write zeros into dense matrices: the size on disk and the "
                            "latency stay those of the dense model; only a sparse format or kernel would turn the "
                            "zeros into savings.")
STEPS = {False: (0.1, "compressing a copy and measuring it…"),  # (progress when the methods start, what each does)
         True: (0.2, "adaptive inference, timed beside the full model…")}  # early exit

Original = Callable[[Settings], Baseline]  # the original measured for these settings (the page's is cached)
OneMethod = Callable[[Settings, str], Row]  # one method measured against the original of these settings


def _parse_all(names: Sequence[str], device: str) -> list[methods.Method]:
    if not names:
        raise ExplorerError(f"No compression method given: pick one or more of {methods.valid_names()}.")
    if len(names) > MAX_METHODS:
        raise ExplorerError(f"{len(names)} methods asked; at most {MAX_METHODS} run in one study: split the list.")
    parsed = list(dict.fromkeys(methods.parse(n) for n in names))  # duplicates run once
    for m in parsed:
        reason = methods.available(m, device)
        if reason:
            raise ExplorerError(reason)
    if len({m.kind == "exit" for m in parsed}) > 1:
        raise ExplorerError("exit-S measures a lab model's trained exits, not a compressed copy: run it apart from "
                            "the other methods (one study with only exit-S methods).")
    return parsed


def _load(model: ModelRef, device: str) -> LoadedModel:
    return load_model(model, model.task("base"), device=device, dtype="float32", purpose="the Compression lab")


def _workload(loaded: LoadedModel, decoder: bool, device: str) -> tuple[Callable[[torch.nn.Module], object], int]:
    """(one timed call on a model, the items it handles): a batch of sentences, or the held-out tokens."""
    tok = loaded.tokenizer
    if decoder:
        ids = tok(quality.heldout_text(), return_tensors="pt")["input_ids"][:, :quality.MAX_TOKENS].to(device)
        return (lambda m: m(input_ids=ids)), int(ids.shape[1])
    sentences = [s for pair in quality.sentence_pairs()[:8] for s in pair]  # 16 sentences
    enc = {k: v.to(device) for k, v in tok(sentences, return_tensors="pt", padding=True).items()}
    return (lambda m: m(**enc)), len(sentences)


def _measure(model: torch.nn.Module, loaded: LoadedModel, ref: quality.Reference, wanted: Settings, prompt: str,
             method: str, description: str) -> Row:
    """``model`` (the original itself, or a copy timed alternately with it) measured on ``loaded``'s device."""
    device = loaded.device
    call, items = _workload(loaded, ref.decoder, device)
    if model is loaded.model:
        base = timing = measure.time_call(lambda: call(model), items, device, repeats=wanted.repeats)
    else:
        base, timing = measure.time_pair(lambda: call(loaded.model), lambda: call(model), items, device,
                                         repeats=wanted.repeats)
    return Row(method, description, measure.disk_bytes(model), measure.memory_bytes(model), timing.latency_ms,
               timing.throughput, base.latency_ms, quality.measure(model, loaded.tokenizer, ref, device),
               methods.sparsity(model),
               quality.answer(model, loaded.tokenizer, ref.decoder, prompt, list(wanted.candidates), device))


def _original(wanted: Settings, report: Progress) -> tuple[Baseline, LoadedModel | None]:
    """The original measured once, and the model it was measured on (None for early exit, which loads its own)."""
    if wanted.exits:
        return earlyexit.baseline(wanted, report), None
    model = resolve.resolve(wanted.key, wanted.models_dir)  # once: every method's copy loads from this ref
    decoder = model.decoder
    report(0.0, f"Loading {wanted.key}…")
    loaded = _load(model, wanted.device)
    where = loaded.device  # what actually ran (an out-of-memory fallback moves it to the CPU)
    shown, said = quality.prompt_used(wanted.prompt, DEFAULT_PROMPTS["decoder" if decoder else "encoder"],
                                      COMPRESSION_PROMPT_CHARS)
    report(0.05, "Measuring the original…")
    ref = quality.reference(loaded.model, loaded.tokenizer, decoder, where)
    row = _measure(loaded.model, loaded, ref, wanted, shown, "original", "the model as loaded (float32)")
    notices = said + ((Q4_NOTE,) if wanted.key == bundled.KEY else ())
    study = Study(wanted.key, loaded.name, decoder, where, placement.device_name(where), "float32",
                  "tokens/s" if decoder else "sentences/s", shown, row, (), notices)
    return Baseline(wanted, study, ref, model), loaded


def baseline(wanted: Settings, progress: Progress | None = None) -> Baseline:
    """The original measured once for ``wanted``: every method of a study is measured against it."""
    return _original(wanted, progress or (lambda _f, _t: None))[0]


def encoder_ranking(wanted: Settings, device: str, model: ModelRef | None = None) -> list[HeadScore]:
    """mheads-N on an encoder: Michel et al.'s importance for its masked-LM loss, measured on the checkpoint's
    masked-LM model (the same encoder with its MLM head), which the base model the study measures lacks."""
    try:
        mlm = load_model(model or resolve.resolve(wanted.key, wanted.models_dir), "masked-lm", device=device,
                         dtype="float32", purpose="the Compression lab")
    except ExplorerError as err:
        raise ExplorerError(f"mheads-N ranks an encoder's heads by its own masked-LM loss: {err} Or pick heads-N, "
                            "the data-free proxy, which needs no loss.") from err
    return methods.masked_scores(mlm.model, mlm.tokenizer, device)


def method_row(base: Baseline, name: str, *, loaded: LoadedModel | None = None,
               ranked: list[HeadScore] | None = None) -> Row:
    """``name`` measured against ``base``: an exit-S speed on the lab model's exits, or a compressed copy of the
    original (made, measured, dropped: the next method starts from the original again). ``loaded`` is the model
    ``base`` was measured on (loaded again through the shared cache when not given); ``ranked`` an encoder's
    masked-LM head ranking for mheads-N (measured here when not given)."""
    m = methods.parse(name)
    if m.kind == "exit":
        return earlyexit.row(base, m)
    ref, where = base.reference, base.study.device
    if not isinstance(ref, quality.Reference):
        raise ExplorerError(f"{m.name} makes a compressed copy, and {base.settings.key} was measured for its early "
                            "exit: run the exit-S methods apart from the other methods.")
    model = base.model or resolve.resolve(base.settings.key, base.settings.models_dir)
    loaded = loaded or _load(model, where)
    if m.kind == "mheads" and not ref.decoder and ranked is None:
        ranked = encoder_ranking(base.settings, where, model)
    copy = methods.apply(loaded.model, m, where, loaded.name, loaded.tokenizer, ranked)
    try:
        return _measure(copy, loaded, ref, base.settings, base.study.prompt, m.name,
                        methods.FIXED.get(m.name, methods.PATTERNS.get(m.kind, "")))
    finally:
        del copy
        gc.collect()


def _in_process(base: Baseline, loaded: LoadedModel | None) -> OneMethod:
    """:func:`method_row` against ``base`` on the model it was measured on; an encoder's mheads-N ranking measured
    once for every mheads-N method of the study."""
    ranking: list[list[HeadScore]] = []

    def one(_wanted: Settings, name: str) -> Row:
        if not ranking and methods.parse(name).kind == "mheads" and not base.study.decoder:
            ranking.append(encoder_ranking(base.settings, base.study.device, base.model))
        return method_row(base, name, loaded=loaded, ranked=ranking[0] if ranking else None)
    return one


def _rows(wanted: Settings, parsed: list[methods.Method], one_method: OneMethod,
          report: Progress) -> tuple[list[Row], tuple[Notice, ...]]:
    """Each method in turn; a request out of time keeps the rows measured so far, with a note saying so."""
    start, doing = STEPS[wanted.exits]
    rows: list[Row] = []
    try:
        for i, m in enumerate(parsed):
            cancel.check()  # a server request out of time keeps the methods measured so far
            report(start + (1 - start) * i / len(parsed), f"{m.name}: {doing}")
            rows.append(one_method(wanted, m.name))
    except cancel.RequestStopped as err:
        if err.reason == "gone" or not rows:  # nobody will see it, or nothing to show: not a result
            raise
        return rows, (Notice("stopped", f"{err} Measured: {len(rows)} of {len(parsed)} methods."),)
    return rows, ()


def run(key: str, method_names: Sequence[str], *, device: str | None = None, models_dir: str | None = None,
        prompt: str | None = None, candidates: tuple[str, ...] = DEFAULT_CANDIDATES,
        repeats: int = measure.REPEATS, progress: Progress | None = None, original: Original | None = None,
        one_method: OneMethod | None = None) -> Study:
    """Measure ``key`` (a catalog key or directory) once and each method against it on ``device``.

    ``original`` and ``one_method`` stand in for :func:`baseline` and :func:`method_row` (the page passes its
    cached ones); ``progress`` hears ``(fraction, "METHOD: ...")`` as each method starts."""
    report = progress or (lambda _f, _t: None)
    where = placement.resolve_device(device)
    parsed = _parse_all(method_names, where)  # before any model loads
    wanted = Settings(key, parsed[0].kind == "exit", where, models_dir, prompt, tuple(candidates), repeats)
    loaded = None
    if original is None:
        base, loaded = _original(wanted, report)
    else:
        report(0.0, "Measuring the original…")
        base = original(wanted)
    rows, stopped = _rows(wanted, parsed, one_method or _in_process(base, loaded), report)
    report(1.0, "Done.")
    dense = (DENSE_NOTE,) if any(m.kind in ("prune", "heads", "mheads") for m in parsed) else ()
    return replace(base.study, rows=tuple(rows), notices=base.study.notices + dense + stopped)
